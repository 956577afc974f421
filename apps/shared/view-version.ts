// The version of the build view snapshot's wire form: written by BuildView.snapshot()
// (build-view.ts) and checked by its schema (build-view-schema.ts). A module of its own so that
// neither of the two imports the other at run time (build-view.ts must not load zod).

/** Bumped on any incompatible change to BuildViewSnapshot. */
export const VIEW_VERSION = 1;
