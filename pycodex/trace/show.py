"""``pycodex trace show``: the timeline in the terminal, coloured with rich (errors in red)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from pycodex.json_types import JsonObj

__all__ = ["render"]


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.1f} ms"


def _at(t: float) -> str:
    return f"{t:8.3f}s"


def _span(start: float, end: float | None) -> str:
    return "unfinished" if end is None else _ms(end - start)


def render(timeline: JsonObj, console: Console) -> None:
    """Print the timeline to ``console``: the requests, each turn with its items and calls, the errors."""
    console.print(Text.assemble(("trace", "bold"), f"  {timeline['events']} events over "
                                f"{timeline['duration']:.3f} s, server pycodex {timeline.get('server')}"))
    console.print(_requests(timeline["requests"]))
    for turn in timeline["turns"]:
        console.print(_turn(turn))
    if not timeline["turns"]:
        console.print(Text("no turns in this trace", style="dim"))
    errors = timeline["errors"]
    if errors:
        console.print(Text(f"{len(errors)} error(s)", style="bold red"))
        for error in errors:
            console.print(Text(f"  {_at(error['t'])}  {error['what']}", style="red"))
    else:
        console.print(Text("no errors", style="green"))


def _requests(requests: list[JsonObj]) -> Table:
    table = Table(title="requests", title_justify="left", show_edge=False)
    for column, justify in (("at", "right"), ("from", "left"), ("id", "right"), ("method", "left"),
                            ("latency", "right"), ("result", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for call in requests:
        failed = call["error"] is not None
        result = call["error"] if failed else ("ok" if call["latency"] is not None else "no answer")
        style = "red" if failed or call["latency"] is None else ""
        table.add_row(_at(call["t"]), call["from"], str(call["id"]), call["method"], _ms(call["latency"]),
                      Text(result, style=style or "green"), style=style)
    return table


def _turn(turn: JsonObj) -> Tree:
    status = turn["status"] or "?"
    colour = "green" if status == "completed" else "red" if status in ("failed", "interrupted") else "yellow"
    tree = Tree(Text.assemble(("turn ", "bold"), (str(turn["id"]), "bold cyan"), f"  {_at(turn['start'])}  ",
                              (status, colour), f"  {_span(turn['start'], turn['end'])}"))
    rows: list[tuple[float, Text]] = []
    for model in turn["model"]:
        output = ", ".join(model["output"]) or "no output"
        style = "red" if model["status"] not in ("completed", "open") else "magenta"
        rows.append((model["start"], Text(
            f"{_at(model['start'])}  model round trip {_span(model['start'], model['end'])} "
            f"(first event {_ms(model['first_event'])}, {model['events']} events) -> {output}", style=style)))
    for item in turn["items"]:
        style = "red" if item["status"] == "failed" else "blue" if item["tool"] else ""
        kind = "tool call" if item["tool"] else "item"
        deltas = f", {item['notifications']} notifications" + (f" ({item['deltas']} deltas)" if item["deltas"] else "")
        rows.append((item["start"], Text(
            f"{_at(item['start'])}  {kind} {item['type']} {_span(item['start'], item['end'])}{deltas}: "
            f"{item['label']}", style=style)))
    for approval in turn["approvals"]:
        decision = approval["decision"] or "unanswered"
        rows.append((approval["t"], Text(
            f"{_at(approval['t'])}  approval {approval.get('method')} waited {_ms(approval['waited'])} "
            f"-> {decision}", style="yellow" if decision != "error" else "red")))
    for call in turn["exec"]:
        rows.append((call["t"], Text(f"{_at(call['t'])}  exec {call['method']} {_ms(call['latency'])}"
                                     + (f" error {call['error']}" if call["error"] else ""),
                                     style="red" if call["error"] else "dim")))
    for _, row in sorted(rows, key=lambda pair: pair[0]):
        tree.add(row)
    counts = ", ".join(f"{method} ×{n}" for method, n in sorted(turn["notifications"].items()))
    tree.add(Text(f"notifications: {counts}", style="dim"))
    return tree
