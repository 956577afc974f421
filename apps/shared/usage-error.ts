// A bad command line, in the same words for every command (`build`, `serve`, `mcp`, `lsp`):
// printed after the command's name with exit code 2. Pure, so any layer can throw it.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const usageWords = {
  needsValue: (flag: string) => `${flag} needs a value`,
  unknownArgument: (arg: string, command: string) => `unknown argument "${arg}" (see trt-build-studio ${command} --help)`,
  between: (flag: string, min: number, max: number, unit: string, got: string) => `${flag} must be between ${min} and ${max} ${unit}, got "${got}"`,
};
