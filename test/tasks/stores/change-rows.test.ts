import { describe, expect, it } from 'vitest'
import { changedTaskIds } from '../../../src/tasks/stores/sql/changes.js'

describe('SQL change rows', () => {
  it('reads the task ids of a well-formed row', () => {
    expect(changedTaskIds('["a","b"]')).toEqual(['a', 'b'])
  })

  it('a row it cannot read names no task instead of stopping the feed', () => {
    for (const text of ['{', '', 'null', '{"ids":["a"]}', '"a"', '42'])
      expect(changedTaskIds(text), text).toEqual([])
    expect(changedTaskIds('["a",1,null,{"x":1},"b"]')).toEqual(['a', 'b'])
  })
})
