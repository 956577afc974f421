// The configuration lives in tools/lint (its own install: see tools/lint/README.md); this file is
// here so that `eslint` and editors run from the repository root find it.
export { default } from './tools/lint/eslint.config.mjs';
