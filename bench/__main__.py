"""``python -m bench [app|fanout|exec|relay|agent|search|trace|tools|providers|all]``: run the benchmarks, print pycodex/Codex ratios."""

from __future__ import annotations

import asyncio
import sys

from bench.harness import PAIRED_RUNS, alternating, implementations, paired, print_table


async def _app() -> None:
    from bench.app_server_bench import big_output_turn, delta_rate, exec_turn_latency

    latency: dict[str, list[float]] = {}
    rate: dict[str, list[float]] = {}
    big_latency: dict[str, list[float]] = {}
    big_rss: dict[str, list[float]] = {}
    impls = implementations()
    for run in range(PAIRED_RUNS):
        for impl in alternating(impls, run):
            latency.setdefault(impl.name, []).append(await exec_turn_latency(impl))
            rate.setdefault(impl.name, []).append(await delta_rate(impl))
            big = await big_output_turn(impl)
            big_latency.setdefault(impl.name, []).append(big[0])
            big_rss.setdefault(impl.name, []).append(big[1])
    print_table("app-server", [
        ("two-call exec turn latency", "s", paired(latency), "lower", 0.5),
        ("agentMessage/delta rate", "deltas/s", paired(rate), "higher", 1.0),
        ("20 MB command turn latency", "s", paired(big_latency), "lower", 1.5),
        ("20 MB command peak RSS", "MiB", paired(big_rss), "lower", 1.0),
    ])
    from bench.startup_bench import run as run_startup

    await run_startup()


async def _main(which: str) -> None:
    if which in ("app", "all"):
        await _app()
    if which in ("fanout", "all"):
        from bench.fanout_bench import run as run_fanout

        await run_fanout()
    if which in ("exec", "all"):
        try:
            from bench.exec_server_bench import run as run_exec
        except ImportError:
            print("\nexec-server benchmarks: not available yet")
        else:
            await run_exec()
    if which in ("relay", "all"):
        try:
            from bench.relay_bench import run as run_relay
        except ImportError:
            print("\nrelay benchmarks: not available yet")
        else:
            await run_relay()
    if which in ("tools", "all"):
        from bench.tools_bench import run as run_tools

        await run_tools()
    if which in ("agent", "all"):
        from bench.agent_api_bench import run as run_agent

        await run_agent()
    if which in ("search", "all"):
        from bench.search_bench import run as run_search

        await run_search()
    if which in ("trace", "all"):
        from bench.trace_bench import run as run_trace

        await run_trace()
    if which in ("providers", "all"):
        from bench.provider_bench import run as run_providers

        await run_providers()


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which not in ("app", "exec", "relay", "agent", "search", "trace", "tools", "fanout", "providers", "all"):
        print("usage: python -m bench [app|fanout|exec|relay|agent|search|trace|tools|providers|all]",
              file=sys.stderr)
        return 2
    asyncio.run(_main(which))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
