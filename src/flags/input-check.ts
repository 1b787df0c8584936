/**
 * The compiled TypeBox checks of flag and segment inputs. Compiling them means loading
 * TypeBox's compiler, which costs more than the rest of the engine to import, so this module is
 * loaded by the first write (see `inputChecks` in `./validate.ts`), not with the engine.
 */
import { Compile } from 'typebox/compile'
import { FlagInputSchema, SegmentInputSchema } from './schemas.js'

/** Checks a flag input (`saveFlag`, `createFlag`, a merged patch). */
export const flagInputCheck = Compile(FlagInputSchema)
/** Checks a segment input (`saveSegment`). */
export const segmentInputCheck = Compile(SegmentInputSchema)
