"""A box's first process: read the registration token, run the exec-server, stop when the app-server goes.

Run by path inside the box (``python /src/app_server/providers/box_main.py URL ENV_ID``), so it imports no
package at all. The token arrives as the first line of stdin (never in the container's config, where
``podman inspect`` would show it) and reaches the exec-server through its environment. Stdin then stays open
for as long as the app-server holds it: end of file means the app-server stopped or died, and the box
ends with it, which is the dead man's switch that keeps a box from outliving its app-server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


def main(argv: list[str]) -> int:
    """Serve ``argv = [registry_url, environment_id]`` until stdin closes, a signal, or the server exits."""
    registry_url, environment_id = argv
    token = sys.stdin.readline().strip()
    if not token:
        print("box: no registration token on stdin", file=sys.stderr)
        return 2
    env = dict(os.environ, CODEX_API_KEY=token)
    server = subprocess.Popen(
        [sys.executable, "-m", "pycodex", "exec-server", "--remote", registry_url, "--environment-id", environment_id],
        env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    done = threading.Event()

    def watch_stdin() -> None:
        while sys.stdin.readline():
            pass
        done.set()

    def on_signal(_signum: int, _frame: object) -> None:
        done.set()

    # As PID 1 of its namespace this process ignores SIGTERM unless it handles it.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=watch_stdin, daemon=True).start()
    def watch_server() -> None:
        server.wait()
        done.set()

    threading.Thread(target=watch_server, daemon=True).start()
    done.wait()
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return server.returncode or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
