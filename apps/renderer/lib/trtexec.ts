// "Copy as trtexec command": the same build, reproducible outside the app with NVIDIA's own tool.
// The command is written by the shared trtexec module, the one `trt-build-studio trtexec` parses
// with, so a copied command always runs the same build here and in trtexec; what trtexec cannot
// say comes back as warnings, shown next to the copy.
import { defaultEnginePath, formatTrtexecCommand, shellQuote, trtexecCopy, type TrtexecFormatInput } from '../../shared/trtexec.js';

export { defaultEnginePath, shellQuote };
export type TrtexecInput = TrtexecFormatInput;

/** `capabilities` (else `trtVersion`): what the backend in use offers; flags it lacks or implies are left out. */
export function trtexecCommand(input: TrtexecInput): string {
  return formatTrtexecCommand(input);
}

/** The command and the warnings about what it leaves out or trtexec would not read. */
export function trtexecCommandWithWarnings(input: TrtexecInput): { text: string; warnings: string[] } {
  return trtexecCopy(input);
}
