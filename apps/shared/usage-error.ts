// Bad input from the person or the agent, theirs to fix: a command line (`build`, `serve`, `mcp`,
// `lsp`, ...: printed after the command's name, exit code 2) or the arguments of an MCP tool or an
// LSP command (a tool error with the message as it is, the LSP's InvalidParams). One class for
// that one meaning; the message is one line, naming the flag or field. Pure, so any layer can
// throw it.

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
