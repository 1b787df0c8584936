/**
 * The shape of a flow (`manager.flow`) and of a chain (`manager.chain`), validated and flattened
 * into nodes before anything is stored: a bad tree changes nothing. Cycles cannot be written
 * (children are nested objects, each visited once; a spec object seen twice is refused).
 */
import { TaskValidationError } from '../errors.js'
import { checkAddTaskOptionNames, type AddTaskOptions } from '../options.js'
import type { TaskHandle } from '../registry.js'
import { newTaskId } from '../task-id.js'

/** Most nodes (tasks) in one flow: the tree is written in one transaction. */
export const MAX_FLOW_NODES = 10_000

/** A node of a flow: a task with its arguments and options, and the tasks it waits for. */
export interface FlowSpec {
  // `any`: a flow mixes handles of every argument and result type.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  task: TaskHandle<any, any>
  args: readonly unknown[]
  options?: AddTaskOptions
  /** Tasks that run first (in parallel, each under its own queue's rules); none: a leaf. */
  children?: readonly FlowSpec[]
}

/** A step of a chain: a task with its arguments (the previous step's result is appended). */
export type ChainStep = Omit<FlowSpec, 'children'>

/** A validated node, parents before their children (the root first). */
export interface FlowNode {
  id: string
  handle: TaskHandle
  args: unknown[]
  options: AddTaskOptions
  /** The parent's id (null for the root). */
  parentId: string | null
  /** How many children the node waits for (0: a leaf). */
  children: number
  /** A chain step: its one child's result is appended to its arguments. */
  chain: boolean
}

/** Flattens `spec` after validating every node; `owns` tells handles of this manager. */
export function flattenFlow(
  spec: unknown,
  owns: (handle: unknown) => boolean,
  chained: ReadonlySet<unknown> = new Set(),
): FlowNode[] {
  const nodes: FlowNode[] = []
  const seen = new Set<unknown>()
  const stack: { spec: unknown; parentId: string | null; path: string }[] = [
    { spec, parentId: null, path: 'flow' },
  ]
  while (stack.length > 0) {
    const item = stack.pop() as (typeof stack)[number]
    const node = checkNode(item.spec, item.path, owns, item.parentId === null)
    if (seen.has(item.spec)) {
      throw new TaskValidationError(
        `${item.path} appears twice in the flow: each node is one task.`,
      )
    }
    seen.add(item.spec)
    if (nodes.length + 1 > MAX_FLOW_NODES) {
      throw new TaskValidationError(`A flow has at most ${String(MAX_FLOW_NODES)} tasks.`)
    }
    const children = node.children ?? []
    const id = newTaskId()
    nodes.push({
      id,
      handle: node.task as TaskHandle,
      args: [...node.args],
      options: node.options ?? {},
      parentId: item.parentId,
      children: children.length,
      chain: chained.has(item.spec),
    })
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({
        spec: children[i],
        parentId: id,
        path: `${item.path}.children[${String(i)}]`,
      })
    }
  }
  return nodes
}

/** Validates one node's own fields (not its children's). */
function checkNode(
  value: unknown,
  path: string,
  owns: (handle: unknown) => boolean,
  root: boolean,
): FlowSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TaskValidationError(`${path} must be an object {task, args, options?, children?}.`)
  }
  const spec = value as Partial<FlowSpec>
  if (!owns(spec.task)) {
    throw new TaskValidationError(
      `${path}.task must be a task handle returned by this manager’s task().`,
    )
  }
  if (!Array.isArray(spec.args)) throw new TaskValidationError(`${path}.args must be an array.`)
  if (spec.children !== undefined && !Array.isArray(spec.children)) {
    throw new TaskValidationError(`${path}.children must be an array of flow nodes.`)
  }
  const options: unknown = spec.options
  if (options !== undefined) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new TaskValidationError(`${path}.options must be an object.`)
    }
    checkAddTaskOptionNames(options)
    const given = options as AddTaskOptions
    if (given.debounce !== undefined) {
      throw new TaskValidationError(`${path}.options: a flow task cannot be debounced.`)
    }
    if (!root && given.idempotencyKey !== undefined) {
      throw new TaskValidationError(
        `${path}.options: only the root of a flow takes an idempotencyKey (it stands for the flow).`,
      )
    }
    if (
      (spec.children ?? []).length > 0 &&
      (given.expiresAt !== undefined || given.ttl !== undefined)
    ) {
      throw new TaskValidationError(
        `${path}.options: a task with children cannot expire (it waits for them).`,
      )
    }
  }
  return spec as FlowSpec
}

/**
 * A chain as a flow: the last step is the root, each step the one child of the next, and every
 * step but the first receives its child's result as its last argument.
 */
export function chainToFlow(steps: unknown): { spec: FlowSpec; chained: Set<unknown> } {
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new TaskValidationError('chain needs a non-empty array of steps {task, args, options?}.')
  }
  const chained = new Set<unknown>()
  let spec: FlowSpec | null = null
  steps.forEach((step: unknown, index) => {
    if (typeof step !== 'object' || step === null || Array.isArray(step)) {
      throw new TaskValidationError(
        `chain[${String(index)}] must be an object {task, args, options?}.`,
      )
    }
    if ('children' in step) {
      throw new TaskValidationError(`chain[${String(index)}] cannot have children: use flow().`)
    }
    const node: FlowSpec = {
      ...(step as ChainStep),
      ...(spec === null ? {} : { children: [spec] }),
    }
    if (spec !== null) chained.add(node)
    spec = node
  })
  return { spec: spec as unknown as FlowSpec, chained }
}
