export { deleteIn, existsIn, getIn, insertAt, setIn, transform, updateIn } from './immutabilityHelpers.js';
export { immutableJSONPatch, parseFrom, parsePath } from './immutableJSONPatch.js';
// utils
export * from './jsonPointer.js';
export { revertJSONPatch } from './revertJSONPatch.js';
export * from './typeguards.js';
// types
export * from './types.js';
