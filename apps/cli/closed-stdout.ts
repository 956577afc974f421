// `trt-build-studio inspect m.onnx | head`: once the reader has gone, the rest of the output has
// no one to read it. Without a listener, the EPIPE would surface as an uncaught error with a
// stack trace; a command whose whole job is printing ends quietly instead, with success, as `cat`
// and `ls` do under a closed pipe. (`build` has its own handling: its worker must be stopped.)
export function endQuietlyWhenStdoutCloses(stdout: NodeJS.WriteStream = process.stdout, exit: (code: number) => void = process.exit): void {
  stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') exit(0);
    else throw e;
  });
}
