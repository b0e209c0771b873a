"""The drift rules table and the report types of support/schema_diff.py; no I/O.

Every difference between two schema surfaces is one :class:`Change` of a rule in :data:`RULES`. A rule's
severity decides what the drift scenario does with it: ``breaking`` fails the pair unless
acknowledged_drift.txt lists it, ``risky`` is reported (drift.txt, the CI summary) and passes,
``additive`` is listed. compat_tests/README.md shows the table; test_schema_diff.py has one case per rule
and checks the README's table against this one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["RULES", "SEVERITIES", "Change", "DriftReport", "Rule", "Severity"]

Severity = Literal["breaking", "risky", "additive"]
SEVERITIES: tuple[Severity, ...] = ("breaking", "risky", "additive")


@dataclass(frozen=True)
class Rule:
    """One row of the drift rules table: how severe a kind of difference is, and why."""

    severity: Severity
    reason: str


#: Every kind of difference ``schema_diff.diff_surfaces`` reports, by rule id.
RULES: dict[str, Rule] = {
    "removed-method": Rule("breaking", 'a client\'s call is answered "method not found"'),
    "removed-notification": Rule("breaking", "a client waiting for it waits forever"),
    "removed-server-request": Rule(
        "breaking", "the exchange the client implements (an approval, a question) no longer happens"
    ),
    "removed-input": Rule("breaking", "clients still send it: the server ignores or refuses what they meant"),
    "narrowed-input": Rule("breaking", "a value (JSON type or enum value) clients send is refused"),
    "input-became-required": Rule("breaking", "clients that omit it are refused"),
    "added-required-input": Rule("breaking", "clients written before it never send it"),
    "removed-output": Rule("breaking", "clients read it and find nothing"),
    "output-type-changed": Rule(
        "breaking", "clients get a JSON type they were not written for (integer -> string, -> number)"
    ),
    "added-server-request": Rule(
        "risky", "an older client cannot answer a request it does not know, and the server waits for it"
    ),
    "deprecated": Rule("risky", "it is slated for removal: clients should move off it before it breaks"),
    "default-changed": Rule("risky", "a client that omits the field silently gets other behaviour"),
    "output-became-optional": Rule("risky", "clients that read it unconditionally fail when it is absent"),
    "output-became-nullable": Rule("risky", "clients that read it unconditionally fail on null"),
    "output-value-added": Rule(
        "risky", "a client matching exhaustively on the values (or variant tags) meets one it does not know"
    ),
    "output-value-removed": Rule(
        "risky", "a client waiting for that value (a status that ends something) may wait forever"
    ),
    "output-unconstrained": Rule("risky", "the schema no longer says what it holds: nothing checks it"),
    "added-method": Rule("additive", "older clients never call it"),
    "added-notification": Rule("additive", "JSON-RPC clients ignore notifications they do not know"),
    "added-input": Rule("additive", "optional: clients that omit it get the old behaviour"),
    "widened-input": Rule(
        "additive",
        "everything clients sent is still accepted (the reverse pair sees it as narrowed-input)",
    ),
    "input-became-optional": Rule("additive", "clients that send it are still understood"),
    "added-output": Rule("additive", "clients ignore fields they do not know"),
    "narrowed-output": Rule("additive", "every value the server now sends was valid before"),
}


@dataclass(frozen=True)
class Change:
    """One classified difference; ``text`` is what acknowledged_drift.txt quotes."""

    rule: str
    text: str

    @property
    def severity(self) -> Severity:
        """The rule's severity."""
        return RULES[self.rule].severity

    def line(self) -> str:
        """``BREAKING [rule] text`` (``RISKY``, ``additive``), as drift.txt prints it."""
        label = self.severity.upper() if self.severity != "additive" else "additive"
        return f"{label} [{self.rule}] {self.text}"


@dataclass
class DriftReport:
    """Every difference from the old surface to the new, in a stable order."""

    changes: list[Change] = field(default_factory=list)

    def of(self, severity: Severity) -> list[str]:
        """The texts of the changes of one severity."""
        return [c.text for c in self.changes if c.severity == severity]

    @property
    def breaking(self) -> list[str]:
        """Texts of the breaking changes."""
        return self.of("breaking")

    @property
    def risky(self) -> list[str]:
        """Texts of the risky changes."""
        return self.of("risky")

    @property
    def additive(self) -> list[str]:
        """Texts of the additive changes."""
        return self.of("additive")

    def summary(self) -> str:
        """A count line, then every change, breaking first."""
        lines = [", ".join(f"{len(self.of(s))} {s}" for s in SEVERITIES)]
        for severity in SEVERITIES:
            lines += [c.line() for c in self.changes if c.severity == severity]
        return "\n".join(lines)
