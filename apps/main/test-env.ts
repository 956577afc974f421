// Variables that exist for tests only: TBS_TEST_* (fault injection, e.g. the service's
// TBS_TEST_EXIT_BEFORE_MANIFEST) and TBS_E2E_* (answers for native dialogs). A packaged app must
// not act on them: a variable left set in a shell, or planted in a desktop session, would otherwise
// pick the files a build writes or break builds on purpose. They are removed from main's
// environment before anything reads it, so neither main, the service it hosts, nor the workers
// (which inherit main's environment) can see them.
export const TEST_ONLY_PREFIXES = ['TBS_TEST_', 'TBS_E2E_'] as const;

/** Deletes the test-only variables from `env` when packaged; returns the names removed. */
export function dropTestOnlyEnv(env: NodeJS.ProcessEnv, isPackaged: boolean): string[] {
  if (!isPackaged) return [];
  const dropped = Object.keys(env).filter((k) => TEST_ONLY_PREFIXES.some((p) => k.startsWith(p)));
  for (const k of dropped) delete env[k];
  return dropped;
}
