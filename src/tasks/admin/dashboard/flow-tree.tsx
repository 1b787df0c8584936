/**
 * A flow on the task detail page: the tree of its tasks (root first, children indented under
 * their parent), each with its status and a link to its own detail page, the viewed task
 * marked. A retry stands under the same parent as the child it replaced.
 */
import type { TaskManager } from '../../manager.js'
import type { StoredTask, TaskRecord } from '../../record.js'
import { MAX_PER_PAGE } from '../../stores/ports.js'
import { StatusBadge } from './parts.js'

/** The records of the flow `task` belongs to (at most one page of 500), or null for a plain task. */
export async function flowOf(
  manager: TaskManager,
  task: StoredTask,
): Promise<{ records: TaskRecord[]; total: number } | null> {
  const flow = task.flow_id ?? null
  if (flow === null) return null
  const page = await manager.listTasks({ flow, perPage: MAX_PER_PAGE })
  return { records: page.items, total: page.total }
}

/** The flow as a nested list of links. */
export function FlowTree(props: {
  flow: { records: TaskRecord[]; total: number }
  current: string
  /** The detail page's URL of a task id. */
  href: (taskId: string) => string
}): JSX.Element {
  const { records, total } = props.flow
  const byParent = new Map<string | null, TaskRecord[]>()
  const ids = new Set(records.map((record) => record.task_id))
  for (const record of [...records].sort((x, y) => x.created_at.localeCompare(y.created_at))) {
    const parent = record.parent_id ?? null
    // A node whose parent is not on the page still shows, at the top.
    const key = parent !== null && ids.has(parent) ? parent : null
    const list = byParent.get(key) ?? []
    list.push(record)
    byParent.set(key, list)
  }
  const branch = (parent: string | null): JSX.Element => (
    <ul class="flow-tree">
      {(byParent.get(parent) ?? []).map((record) => (
        <li>
          <StatusBadge status={record.status} />{' '}
          {record.task_id === props.current ? (
            <strong class="mono" safe>
              {record.func_name}
            </strong>
          ) : (
            <a class="mono" href={props.href(record.task_id)} safe>
              {record.func_name}
            </a>
          )}{' '}
          <span class="muted mono" safe>
            {record.task_id}
          </span>
          {byParent.has(record.task_id) ? branch(record.task_id) : ''}
        </li>
      ))}
    </ul>
  )
  return (
    <section class="panel" aria-labelledby="flow-title">
      <h2 id="flow-title">Flow</h2>
      {total > records.length ? (
        <p class="muted">
          The first {records.length} of {total} tasks.
        </p>
      ) : (
        ''
      )}
      {branch(null)}
    </section>
  )
}
