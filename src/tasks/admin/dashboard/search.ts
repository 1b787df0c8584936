/**
 * The run table's search box: plain text is a task-id prefix or an exact function name (the
 * list API's `q`); qualifiers narrow it — `status:failed`, `func:send_email`, `queue:emails`,
 * `tag:region=eu` (repeatable) — so an operator types one line and the URL keeps it.
 */
import { TASK_STATUSES, type TaskStatus } from '../../status.js'

/** What a search line asks for. */
export interface RunSearch {
  q: string | undefined
  status: TaskStatus | undefined
  funcName: string | undefined
  queue: string | undefined
  tags: [string, string][]
  /** Words that could not be used, with why (shown next to the box). */
  problems: string[]
}

/** Most tag qualifiers one search takes (the list API's limit). */
const MAX_TAGS = 10
/** Longest value of one word (the list API's limit). */
const MAX_WORD = 255

/** Parses a search line. Unknown statuses, malformed tags and too-long words become problems. */
export function parseRunSearch(line: string): RunSearch {
  const search: RunSearch = {
    q: undefined,
    status: undefined,
    funcName: undefined,
    queue: undefined,
    tags: [],
    problems: [],
  }
  const plain: string[] = []
  for (const word of line.trim().split(/\s+/).slice(0, 50)) {
    if (word === '') continue
    const colon = word.indexOf(':')
    const key = colon > 0 ? word.slice(0, colon).toLowerCase() : ''
    const value = colon > 0 ? word.slice(colon + 1) : word
    if (value.length > MAX_WORD) {
      search.problems.push(`"${word.slice(0, 40)}…" is longer than ${MAX_WORD} characters.`)
      continue
    }
    if (key === 'status') {
      if ((TASK_STATUSES as readonly string[]).includes(value)) search.status = value as TaskStatus
      else search.problems.push(`Unknown status "${value}": use ${TASK_STATUSES.join(', ')}.`)
    } else if (key === 'func' || key === 'function') {
      if (value !== '') search.funcName = value
    } else if (key === 'queue') {
      if (value !== '') search.queue = value
    } else if (key === 'tag') {
      const at = value.indexOf('=')
      if (at <= 0) search.problems.push(`Tag "${value}" needs the form key=value.`)
      else if (search.tags.length >= MAX_TAGS)
        search.problems.push(`At most ${MAX_TAGS} tags per search.`)
      else search.tags.push([value.slice(0, at), value.slice(at + 1)])
    } else {
      plain.push(word)
    }
  }
  const q = plain.join(' ')
  if (q.length > MAX_WORD) search.problems.push(`The search text is longer than ${MAX_WORD}.`)
  else if (q !== '') search.q = q
  return search
}
