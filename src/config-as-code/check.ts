/**
 * The compiled structural check of configuration documents. Compiling loads TypeBox's
 * compiler, so this module is loaded by the first plan, not with the admin app.
 */
import { Compile } from 'typebox/compile'
import { ConfigDocumentSchema } from './document.js'

/** Checks a whole configuration document's shape. */
export const configDocumentCheck = Compile(ConfigDocumentSchema)
