"""Finding a running studio (docs/watch.md, "Finding the studio").

The desktop app and `serve` publish `studio-<pid>.json` in a private folder. A reader refuses the
folder or a file when another user owns it or its mode lets others in, skips files whose `pid` is
not alive, and only connects to a probe socket inside that same folder (the folder's mode is the
socket's access control).
"""

import glob
import json
import os
import stat


def studio_folder():
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):  # as the studio publishes (apps/service/studio-registry.ts)
        return os.path.join(base, "trt-build-studio")
    return "/tmp/trt-build-studio-%d" % os.getuid()


def _private(st, uid, want_dir):
    kind_ok = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
    return kind_ok and st.st_uid == uid and (st.st_mode & 0o077) == 0


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except Exception:
        return False
    return True


def probe_sockets(folder=None):
    """Probe socket paths of the running studios, newest file first. Never raises."""
    folder = folder or studio_folder()
    uid = os.getuid()
    try:
        if not _private(os.lstat(folder), uid, True):
            return []
    except OSError:
        return []
    found = []
    for f in glob.glob(os.path.join(folder, "studio-*.json")):
        try:
            st = os.lstat(f)
            if not _private(st, uid, False):
                continue
            with open(f, "r", encoding="utf-8") as fh:
                doc = json.load(fh)
            pid = doc.get("pid")
            sock = doc.get("probeSocket")
            if doc.get("v") != 1 or not isinstance(pid, int) or not isinstance(sock, str):
                continue
            if not _alive(pid):
                continue
            if os.path.realpath(os.path.dirname(sock)) != os.path.realpath(folder):
                continue
            found.append((st.st_mtime, sock))
        except Exception:
            continue
    found.sort(reverse=True)
    return [s for _, s in found]
