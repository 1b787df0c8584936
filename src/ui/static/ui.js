/*
 * switchyard dashboards: the little behaviour htmx does not cover.
 *
 * - Live updates: the page's stream (htmx-ext-sse's `sse-connect`) names its event types in
 *   `data-live-events` and how to read a record key from each (`data-live-keys`, type → fields).
 *   An element with `data-live="type …"` and `data-live-url` (or, for table rows, the closest
 *   `data-live-row-url` plus `key=<data-live-key>`) is re-fetched (outerHTML swap) when an event
 *   of one of its types arrives; with `data-live-key` only for events of that record.
 *   A keyed event that matches no element refreshes the `data-live-fallback` sections instead
 *   (a record the page did not show yet). Fetches of one element never overlap: changes that
 *   arrive meanwhile cause exactly one more fetch.
 * - Live indicator (live / paused / reconnecting); pause freezes the view and counts changes.
 *   While the stream is unavailable and the stream element has `data-poll-interval` (seconds),
 *   the live sections are refreshed at that interval and the indicator says so.
 * - A section holding a form being edited is never replaced under the user: it shows a notice.
 * - Session expiry: a 401 answer (or, once the stream fails, a 401 from the page's session check)
 *   stops the stream and shows "Session expired — log in", whose link returns to the page's own
 *   address (never to a fragment's).
 * - CSRF and platform headers on every htmx request; toasts and flashes from `HX-Trigger`;
 *   the action dialog; relative times; `/` focuses search; the live total of rollout weights.
 */
;(function () {
  'use strict'
  var doc = document
  var meta = function (name) {
    var el = doc.querySelector('meta[name="' + name + '"]')
    return el ? el.getAttribute('content') : null
  }

  // ---- requests -----------------------------------------------------------------------------
  doc.addEventListener('htmx:configRequest', function (event) {
    var token = meta('csrf-token')
    if (token) event.detail.headers['X-CSRF-Token'] = token
    event.detail.headers['X-Ctl-Platform'] = 'dashboard'
    // A button marked `data-with-key` sends its row's key (rows of long tables carry it once).
    var elt = event.detail.elt
    var row =
      elt && elt.hasAttribute && elt.hasAttribute('data-with-key')
        ? elt.closest('[data-live-key]')
        : null
    if (row) event.detail.parameters.key = row.getAttribute('data-live-key')
  })

  // ---- toasts and flashes -------------------------------------------------------------------
  var FLASH_KEY = 'switchyard-flash'
  function toast(detail) {
    var region = doc.getElementById('ui-toasts')
    if (!region || !detail || !detail.message) return
    var item = doc.createElement('div')
    item.className = 'toast toast-' + (detail.kind || 'info')
    item.setAttribute('role', detail.kind === 'error' ? 'alert' : 'status')
    var text = doc.createElement('span')
    text.textContent = detail.message
    var close = doc.createElement('button')
    close.type = 'button'
    close.className = 'toast-close'
    close.setAttribute('aria-label', 'Dismiss')
    close.textContent = '×'
    close.addEventListener('click', function () {
      item.remove()
    })
    item.appendChild(text)
    item.appendChild(close)
    region.appendChild(item)
    setTimeout(
      function () {
        item.remove()
      },
      detail.kind === 'error' ? 12000 : 6000,
    )
  }
  doc.addEventListener('ui-toast', function (event) {
    toast(event.detail)
  })
  doc.addEventListener('ui-flash', function (event) {
    try {
      sessionStorage.setItem(FLASH_KEY, JSON.stringify(event.detail))
    } catch {
      toast(event.detail)
    }
  })
  function showStoredFlash() {
    try {
      var stored = sessionStorage.getItem(FLASH_KEY)
      if (stored) {
        sessionStorage.removeItem(FLASH_KEY)
        toast(JSON.parse(stored))
      }
    } catch {
      /* storage unavailable: nothing stored */
    }
  }

  // ---- the action dialog --------------------------------------------------------------------
  function dialog() {
    return doc.getElementById('ui-dialog')
  }
  // A request whose swap is `none` (an action that only answers with a toast) still reports a
  // swap into the target it inherits; only a real swap into the dialog body opens the dialog.
  function swapsNothing(elt) {
    var owner = elt && elt.closest ? elt.closest('[hx-swap]') : null
    return owner !== null && /^none\b/.test(owner.getAttribute('hx-swap') || '')
  }
  doc.addEventListener('htmx:afterSwap', function (event) {
    var box = dialog()
    if (
      box &&
      event.detail.target &&
      event.detail.target.id === 'ui-dialog-body' &&
      !swapsNothing(event.detail.requestConfig ? event.detail.requestConfig.elt : event.detail.elt)
    ) {
      if (!box.open) box.showModal()
      var first = box.querySelector('[autofocus], input:not([type=hidden]), select, textarea')
      if (first) first.focus()
    }
  })
  // `hx-confirm` asks in the action dialog, never with the browser's confirm(): the question
  // as its title, "Keep as it is", and a button that names the action (`data-confirm-label`, else the
  // text of the control that asked). Built with DOM calls, so the question stays text.
  doc.addEventListener('htmx:confirm', function (event) {
    var question = event.detail.question
    var box = dialog()
    var body = doc.getElementById('ui-dialog-body')
    if (!question || !box || !body) return
    event.preventDefault()
    var elt = event.detail.elt
    var trigger = event.detail.triggeringEvent
    if (elt && elt.tagName === 'FORM' && trigger && trigger.submitter) elt = trigger.submitter
    var text = elt && elt.tagName === 'BUTTON' ? elt.textContent.trim() : ''
    var label =
      (elt && elt.getAttribute && elt.getAttribute('data-confirm-label')) ||
      (text.length > 0 && text.length <= 60 ? text : '') ||
      'Confirm'
    var inner = doc.createElement('div')
    inner.className = 'dialog-inner'
    var head = doc.createElement('div')
    head.className = 'dialog-head'
    var title = doc.createElement('h2')
    title.id = 'ui-dialog-title'
    title.textContent = question
    head.appendChild(title)
    var actions = doc.createElement('div')
    actions.className = 'form-actions'
    var ok = doc.createElement('button')
    ok.type = 'button'
    ok.className = 'btn btn-danger'
    ok.textContent = label
    ok.setAttribute('data-confirm-ok', '')
    var cancel = doc.createElement('button')
    cancel.type = 'button'
    cancel.className = 'btn'
    cancel.textContent = 'Keep as it is'
    cancel.setAttribute('data-dialog-close', '')
    actions.appendChild(ok)
    actions.appendChild(cancel)
    inner.appendChild(head)
    inner.appendChild(actions)
    body.replaceChildren(inner)
    ok.addEventListener('click', function () {
      box.close()
      event.detail.issueRequest(true)
    })
    if (!box.open) box.showModal()
    cancel.focus()
  })
  doc.addEventListener('ui-close-dialog', function () {
    var box = dialog()
    if (box && box.open) box.close()
  })
  doc.addEventListener('click', function (event) {
    var target = event.target
    if (target && target.closest && target.closest('[data-dialog-close]')) {
      var box = dialog()
      if (box) box.close()
    }
  })

  // ---- dirty forms ---------------------------------------------------------------------------
  doc.addEventListener('input', function (event) {
    var form = event.target && event.target.closest ? event.target.closest('form[data-keep]') : null
    if (form) form.setAttribute('data-dirty', '1')
  })
  doc.addEventListener('htmx:afterRequest', function (event) {
    var elt = event.detail.elt
    if (event.detail.successful && elt && elt.tagName === 'FORM') elt.removeAttribute('data-dirty')
  })

  // ---- live updates ---------------------------------------------------------------------------
  var paused = false
  var pausedCount = 0
  var pending = new Set() // ids to refresh on resume
  var inflight = new Set()
  var again = new Set()
  var hadError = false
  var pollTimer = null

  function pollSeconds() {
    var root = doc.getElementById('ui-stream')
    var value = root ? Number(root.getAttribute('data-poll-interval')) : NaN
    return value > 0 ? value : 0
  }
  function startPolling() {
    var seconds = pollSeconds()
    if (pollTimer !== null || seconds <= 0) return
    pollTimer = window.setInterval(resync, seconds * 1000)
  }
  function stopPolling() {
    if (pollTimer === null) return
    window.clearInterval(pollTimer)
    pollTimer = null
  }

  function indicator(state) {
    var el = doc.getElementById('ui-live')
    if (!el) return
    el.setAttribute('data-state', paused ? 'paused' : state || el.getAttribute('data-conn'))
    if (state) el.setAttribute('data-conn', state)
    var label = el.querySelector('.live-label')
    var conn = el.getAttribute('data-conn')
    var text = paused
      ? 'Paused' + (pausedCount > 0 ? ' · ' + pausedCount + ' new' : '')
      : conn === 'live'
        ? 'Live'
        : conn === 'expired'
          ? 'Session expired'
          : conn === 'reconnecting'
            ? pollTimer !== null
              ? 'Polling every ' + pollSeconds() + ' s'
              : 'Reconnecting…'
            : 'Connecting…'
    if (label) label.textContent = text
    el.setAttribute('aria-pressed', paused ? 'true' : 'false')
    el.title = paused ? 'Resume live updates' : 'Pause live updates'
  }

  function highlightIds(root) {
    var ids = new Set()
    if (root.hasAttribute('data-live-highlight'))
      root.querySelectorAll('[id]').forEach(function (row) {
        ids.add(row.id)
      })
    return ids
  }

  /**
   * Where an element's fresh copy comes from: its `data-live-url`, else the closest
   * `data-live-row-url` with the element's key appended as `key` (keeps long tables small).
   */
  function liveUrl(el) {
    var own = el.getAttribute('data-live-url')
    if (own) return own
    var base = el.closest('[data-live-row-url]')
    var key = el.getAttribute('data-live-key')
    if (!base || key === null) return null
    var url = base.getAttribute('data-live-row-url')
    return url + (url.indexOf('?') < 0 ? '?' : '&') + 'key=' + encodeURIComponent(key)
  }

  function refresh(el) {
    var id = el.id
    if (!id) return
    if (paused) {
      pending.add(id)
      return
    }
    if (inflight.has(id)) {
      again.add(id)
      return
    }
    var form = el.querySelector('form[data-dirty]')
    if (form) {
      var stale = el.querySelector('[data-live-stale]')
      if (stale) stale.hidden = false
      return
    }
    var url = liveUrl(el)
    if (!url) return
    var before = highlightIds(el)
    inflight.add(id)
    htmx
      .ajax('GET', url, { source: el, target: el, swap: 'outerHTML' })
      .catch(function () {
        /* reported by htmx:responseError */
      })
      .then(function () {
        inflight.delete(id)
        var fresh = doc.getElementById(id)
        if (fresh && before.size > 0)
          fresh.querySelectorAll('[id]').forEach(function (row) {
            if (!before.has(row.id)) row.classList.add('is-new')
          })
        if (again.delete(id) && fresh) refresh(fresh)
      })
  }

  function keyOf(source, type, data) {
    var spec = source.__liveKeys
    var fields = spec && spec[type]
    if (!fields || !data || typeof data !== 'object') return null
    return fields
      .map(function (field) {
        var value = data[field]
        return value === null || value === undefined ? '' : String(value)
      })
      .join(' ')
  }

  /** Refreshes what an event of `type` (record `key`, or null) changes. */
  function dispatch(type, key) {
    var matched = false
    doc.querySelectorAll('[data-live]').forEach(function (el) {
      var types = (el.getAttribute('data-live') || '').split(/\s+/)
      if (types.indexOf(type) < 0) return
      var own = el.getAttribute('data-live-key')
      if (own === null) {
        refresh(el)
      } else if (key !== null && own === key) {
        matched = true
        refresh(el)
      }
    })
    if (key !== null && !matched)
      doc.querySelectorAll('[data-live-fallback]').forEach(function (el) {
        var types = (el.getAttribute('data-live-fallback') || '').split(/\s+/)
        if (types.indexOf(type) >= 0) refresh(el)
      })
  }

  function resync() {
    doc.querySelectorAll('[data-live-fallback]').forEach(refresh)
    doc.querySelectorAll('[data-live]:not([data-live-key])').forEach(refresh)
  }

  var attached = new WeakSet()
  doc.addEventListener('htmx:sseOpen', function (event) {
    var source = event.detail.source
    lastSource = source
    var root = event.target
    if (source && !attached.has(source)) {
      attached.add(source)
      try {
        source.__liveKeys = JSON.parse(root.getAttribute('data-live-keys') || '{}')
      } catch {
        source.__liveKeys = {}
      }
      ;(root.getAttribute('data-live-events') || '').split(/\s+/).forEach(function (type) {
        if (!type) return
        source.addEventListener(type, function (message) {
          var data = null
          try {
            data = JSON.parse(message.data)
          } catch {
            data = null
          }
          if (paused) pausedCount++
          dispatch(type, keyOf(source, type, data))
          if (paused) indicator()
        })
      })
    }
    stopPolling()
    indicator('live')
    if (hadError) {
      hadError = false
      resync()
    }
  })
  doc.addEventListener('htmx:sseError', function (event) {
    if (expired) return
    lastSource = event.detail && event.detail.source ? event.detail.source : lastSource
    hadError = true
    startPolling()
    indicator('reconnecting')
    // The stream ends when its session does: ask whether that is why.
    checkSession()
  })

  // ---- session expiry -----------------------------------------------------------------------
  var expired = false
  var lastSource = null
  var checking = false
  function streamRoot() {
    return doc.getElementById('ui-stream')
  }
  /** The login view, coming back to the page the operator is on (not to a fragment). */
  function loginHref() {
    var login = streamRoot().getAttribute('data-login-url')
    var page = window.location.pathname + window.location.search
    return login + (login.indexOf('?') < 0 ? '?' : '&') + 'next=' + encodeURIComponent(page)
  }
  function sessionExpired() {
    var root = streamRoot()
    if (expired || !root || !root.getAttribute('data-login-url')) return
    expired = true
    // Without `sse-connect` the extension's retries open nothing; the open source is closed.
    root.removeAttribute('sse-connect')
    if (lastSource) lastSource.close()
    stopPolling()
    paused = false
    indicator('expired')
    var box = dialog()
    if (box && box.open) box.close()
    var notice = doc.getElementById('ui-session-expired')
    if (notice) {
      var link = notice.querySelector('[data-login-link]')
      if (link) link.setAttribute('href', loginHref())
      notice.hidden = false
    }
  }
  function checkSession() {
    var root = streamRoot()
    var url = root ? root.getAttribute('data-session-url') : null
    if (!url || checking || expired) return
    checking = true
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (response) {
        if (response.status === 401) sessionExpired()
      })
      .catch(function () {
        /* the server is unreachable: the stream keeps reconnecting */
      })
      .then(function () {
        checking = false
      })
  }
  doc.addEventListener('htmx:responseError', function (event) {
    var xhr = event.detail && event.detail.xhr
    if (xhr && xhr.status === 401) sessionExpired()
  })
  doc.addEventListener('ui-refresh', function (event) {
    var detail = event.detail || {}
    var keys = detail.keys && detail.keys.length ? detail.keys : [null]
    keys.forEach(function (key) {
      dispatch(detail.type, key)
    })
  })
  doc.addEventListener('click', function (event) {
    var button = event.target && event.target.closest ? event.target.closest('#ui-live') : null
    if (!button || expired) return
    paused = !paused
    if (!paused) {
      pausedCount = 0
      var ids = Array.from(pending)
      pending.clear()
      ids.forEach(function (id) {
        var el = doc.getElementById(id)
        if (el) refresh(el)
      })
    }
    indicator()
  })

  // ---- login: the form posts JSON to the API's login endpoint -------------------------------
  doc.addEventListener('submit', function (event) {
    var form = event.target
    if (!form || !form.matches || !form.matches('form[data-login]')) return
    event.preventDefault()
    var error = form.querySelector('[role=alert]')
    var button = form.querySelector('[type=submit]')
    var show = function (message) {
      if (!error) return
      error.textContent = message
      error.hidden = false
    }
    if (button) button.disabled = true
    fetch(form.getAttribute('action'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ctl-platform': 'dashboard' },
      credentials: 'same-origin',
      body: JSON.stringify({
        username: form.elements.username.value,
        password: form.elements.password.value,
      }),
    })
      .then(function (response) {
        if (response.ok) {
          window.location.assign(form.getAttribute('data-next') || '/')
          return null
        }
        return response.json().then(function (body) {
          show(
            (body && body.error && body.error.message) || 'Login failed (' + response.status + ').',
          )
        })
      })
      .catch(function () {
        show('The server cannot be reached. Try again.')
      })
      .then(function () {
        if (button) button.disabled = false
      })
  })

  // ---- forms that take a datetime: the browser's UTC offset ---------------------------------
  function fillTimezones(root) {
    ;(root || doc).querySelectorAll('input[data-tz]').forEach(function (input) {
      input.value = String(new Date().getTimezoneOffset())
    })
  }
  doc.addEventListener('htmx:afterSwap', function () {
    fillTimezones(doc)
  })

  // ---- time that reads itself ---------------------------------------------------------------
  var relative =
    typeof Intl !== 'undefined' && Intl.RelativeTimeFormat
      ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
      : null
  var absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
  var clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
  var UNITS = [
    ['year', 31536000],
    ['month', 2592000],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ]
  function updateTimes(root) {
    var now = Date.now()
    ;(root || doc).querySelectorAll('time[data-relative]').forEach(function (el) {
      var at = Date.parse(el.getAttribute('datetime') || '')
      if (isNaN(at)) return
      var seconds = Math.round((at - now) / 1000)
      if (relative) {
        for (var i = 0; i < UNITS.length; i++) {
          var unit = UNITS[i]
          if (Math.abs(seconds) >= unit[1] || unit[0] === 'second') {
            el.textContent =
              Math.abs(seconds) < 10
                ? 'just now'
                : relative.format(Math.round(seconds / unit[1]), unit[0])
            break
          }
        }
      }
      if (!el.hasAttribute('data-titled')) {
        el.title =
          absolute.format(new Date(at)) + ' (local) · ' + new Date(at).toISOString() + ' (UTC)'
        el.setAttribute('data-titled', '')
      }
    })
    // A wall-clock time ("until 14:30"): rendered in UTC by the server, shown in local time.
    ;(root || doc).querySelectorAll('time[data-clock]').forEach(function (el) {
      var at = Date.parse(el.getAttribute('datetime') || '')
      if (isNaN(at) || el.hasAttribute('data-titled')) return
      el.textContent = clock.format(new Date(at))
      el.title =
        absolute.format(new Date(at)) + ' (local) · ' + new Date(at).toISOString() + ' (UTC)'
      el.setAttribute('data-titled', '')
    })
  }
  doc.addEventListener('htmx:afterSettle', function (event) {
    updateTimes(event.detail.elt && event.detail.elt.parentNode ? event.detail.elt.parentNode : doc)
  })
  setInterval(updateTimes, 30000)

  // ---- keyboard and small conveniences ------------------------------------------------------
  doc.addEventListener('keydown', function (event) {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return
    var active = doc.activeElement
    if (active && (active.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)))
      return
    var search = doc.querySelector('[data-search]')
    if (search) {
      event.preventDefault()
      search.focus()
      if (search.select) search.select()
    }
  })
  doc.addEventListener('change', function (event) {
    var el = event.target
    if (el && el.matches && el.matches('[data-autosubmit]') && el.form) el.form.requestSubmit()
  })

  // ---- Copy buttons: `data-copy` names the field whose value goes to the clipboard --------
  doc.addEventListener('click', function (event) {
    var button = event.target && event.target.closest ? event.target.closest('[data-copy]') : null
    if (!button) return
    var field = doc.getElementById(button.getAttribute('data-copy'))
    if (!field) return
    var copied = function () {
      button.textContent = 'Copied'
      toast({ message: 'Copied to the clipboard.', kind: 'success' })
    }
    field.select()
    var clipboard = window.navigator.clipboard
    if (clipboard && clipboard.writeText) {
      clipboard.writeText(field.value).then(copied, function () {
        if (doc.execCommand('copy')) copied()
      })
    } else if (doc.execCommand('copy')) copied()
  })

  // ---- rollout editors: the total as it is typed; weights shown only for a rollout ----------
  function rolloutTotal(fieldset) {
    var total = 0
    fieldset.querySelectorAll('input.weight').forEach(function (input) {
      var percent = Number(String(input.value).replace(/\s*%$/, '') || '0')
      if (isFinite(percent)) total += Math.round(percent * 1000)
    })
    var out = fieldset.querySelector('[data-rollout-sum]')
    if (!out) return
    out.textContent = 'Total ' + total / 1000 + ' %' + (total === 100000 ? '' : ' — must be 100 %')
    out.className = total === 100000 ? 'ok' : 'off'
  }
  doc.addEventListener('input', function (event) {
    var el = event.target
    var fieldset = el && el.closest ? el.closest('[data-rollout]') : null
    if (fieldset) rolloutTotal(fieldset)
  })
  doc.addEventListener('change', function (event) {
    var el = event.target
    if (!el || !el.matches || !el.matches('select[data-serve-for]')) return
    var fieldset = doc.getElementById(el.getAttribute('data-serve-for'))
    if (fieldset) fieldset.hidden = el.value !== '%rollout'
  })

  function start() {
    updateTimes(doc)
    fillTimezones(doc)
    showStoredFlash()
    indicator()
  }
  if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', start)
  else start()
})()
