"""What the CLI says on standard error: errors, warnings and progress.

Every command reports the same way -- one ``skdp-synth: error:`` line and exit
status 2 for a user error (:class:`CLIError`), library warnings relayed as one
``skdp-synth: warning:`` line in the schema file's terms (:class:`_cli_warnings`),
progress bars that tqdm draws only on a terminal (:class:`_Steps`) -- so these
live apart from the commands that use them, with nothing of the CLI below them.
"""

from __future__ import annotations

import sys
import time
import warnings


def _usage_error(message):
    """A user error found while reading the arguments: one line, exit status 2
    (as argparse's own errors and every other user error): ``main``
    turns this ``SystemExit(message)`` into the one error format and returns 2."""
    raise SystemExit(message)


def _progress(iterable, desc, total=None):
    """tqdm when installed (extra 'cli'), otherwise plain progress lines."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment

        def plain():
            for i, item in enumerate(iterable):
                print(f"[{desc}] {i + 1}/{total or '?'}", file=sys.stderr, flush=True)
                yield item

        return plain()
    # disable=None: no bar when stderr is not a terminal (a log file would
    # get every redraw)
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, disable=None)


def _bar(desc, total, *, counts=True):
    """A manual progress bar (``update``/``close``): tqdm, or plain lines.

    ``counts=False`` shows the elapsed time only: a count of tasks done
    that grows with the input's size (the out-of-core fit's chunks) is a
    function of ``n``, which neighbouring inputs would show apart."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment

        class Plain:
            done = 0

            def update(self, k):
                self.done += k
                if counts:
                    print(f"[{desc}] {self.done}/{total}", file=sys.stderr, flush=True)
                elif self.done == k:
                    print(f"[{desc}] running", file=sys.stderr, flush=True)

            def close(self):
                pass

        return Plain()
    if not counts:
        return tqdm(
            desc=desc,
            total=None,
            file=sys.stderr,
            disable=None,
            bar_format="{desc}: {elapsed}",
        )
    return tqdm(desc=desc, total=total, file=sys.stderr, disable=None)


class CLIError(ValueError):
    """A user error: reported in one line, exit status 2."""


def _privacy_spent(pipe, leaked=False):
    """``"; privacy spent: ..."`` for a private pipeline, else ``""``.

    The pipeline's composed guarantee: its encoder's private domains and the
    synthesizer together (the ε and δ written), not the synthesizer's part;
    none where the pipeline records none (a last step that is not private:
    the last step's own would be claimed for rows it does not cover). When a
    warning said something was learned from the data without privacy
    (``leaked``), the line says the guarantee does not cover it: a bare
    "privacy spent: epsilon=1" after such a warning reads as the whole truth.
    """
    g = getattr(pipe, "privacy_guarantee_", None)
    if g is None:
        return ""
    caveat = (
        "; it does not cover what the warnings above say was learned from the data"
        if leaked
        else ""
    )
    return (
        f"; privacy spent: epsilon={g.epsilon:g}, "
        f"delta={g.delta:g} ({g.neighbouring} neighbours){caveat}"
    )


#: Said (once, before the fit) when ``synthesize`` has no ``--schema``.
NO_SCHEMA_WARNING = (
    "no --schema: pandas reads each column's type from its values, and a "
    "domain the method cannot learn privately is taken from the input itself: "
    "that part is NOT covered by the privacy guarantee. Declare the column "
    "types (and any public levels or bin edges) in a schema file (see "
    "'skdp-synth synthesize --help')."
)


#: Appended to the encoder's leak warning: where a schema file declares it.
FULL_SCHEMA_HINT = "the schema file's keys of the same names"


TYPES_ONLY_HINT = (
    'in the schema\'s "columns": a column\'s "levels", "bin_edges" or '
    '"missing"; a method with a budget (--epsilon) learns numeric domains '
    "privately, and with a --delta categorical levels too"
)


def _warn(message):
    """One warning line on standard error, in the CLI's format.

    Through ``tqdm.write`` when tqdm is installed, so that a progress bar on
    the terminal is not cut by the line.
    """
    line = f"skdp-synth: warning: {' '.join(str(message).split())}"
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment
        print(line, file=sys.stderr)
    else:
        tqdm.write(line, file=sys.stderr)


class _cli_warnings(warnings.catch_warnings):
    """Warnings shown as one ``skdp-synth: warning:`` line, not Python's format.

    They stay Python warnings (``warnings.catch_warnings(record=True)``, e.g.
    ``pytest.warns``, still records them): only ``warnings.formatwarning`` is
    replaced while the command runs, by a formatter that writes the CLI's
    line itself (through :func:`_warn`, so that a progress bar is not cut)
    and hands Python an empty text. Without a schema the encoder's
    :class:`~skdp_synth.exceptions.PrivacyLeakWarning` (which advises Python
    keyword arguments) is not repeated: :data:`NO_SCHEMA_WARNING` said it for
    the command line.
    """

    def __init__(self, *, schema_given, types_only=False):
        super().__init__()
        self.leaked = False  # a PrivacyLeakWarning was shown
        self.schema_given = schema_given
        self.hint = TYPES_ONLY_HINT if types_only else FULL_SCHEMA_HINT

    def __enter__(self):
        from ..exceptions import (
            CoarseDomainWarning,
            NumbersAsTextWarning,
            PrivacyLeakWarning,
        )

        result = super().__enter__()
        warnings.simplefilter("always")
        # the schema states every column's type: a column it calls
        # categorical is text by the user's word, not pandas' guess; without
        # one, pandas guessed, and a column of numbers with a marker among
        # them is text to it
        if self.schema_given:
            warnings.simplefilter("ignore", NumbersAsTextWarning)
        self.leaked = False
        shown = warnings.showwarning  # restored by the base's __exit__

        def showwarning(message, category, *args, **kwargs):
            if issubclass(category, PrivacyLeakWarning):
                self.leaked = True
            return shown(message, category, *args, **kwargs)

        warnings.showwarning = showwarning

        def formatwarning(message, category, filename, lineno, line=None):
            if issubclass(category, PrivacyLeakWarning):
                if not self.schema_given:
                    return ""
                if "Declare them via" in str(message):
                    # the encoder's domains, said in Python keywords: where
                    # they go in the schema (not after a time zone's or a
                    # type's warning, which say it)
                    message = f"{message} ({self.hint})"
            text = _in_schema_terms(str(message))
            if issubclass(category, CoarseDomainWarning) and "no level" in text:
                # a date read as text is a categorical column of many rare
                # levels: all "other"
                text += (
                    ' A column of dates is of type "datetime" in the schema; '
                    "without it, it is read as text."
                )
            _warn(text)
            return ""

        self._saved_format = warnings.formatwarning  # (not saved by the base)
        warnings.formatwarning = formatwarning
        return result

    def __exit__(self, *exc_info):
        warnings.formatwarning = self._saved_format
        return super().__exit__(*exc_info)


class _Steps:
    """Progress over named steps (tqdm when installed, else plain lines).

    A context manager: the bar is closed on the way out, so that an error
    line starts on a line of its own. With tqdm, the bar names the running
    step and its seconds so far, redrawn every ``TICK`` seconds by a daemon
    thread, so that a long fit is seen to be running.
    """

    #: Seconds between redraws of the running step's time.
    TICK = 1.0

    def __init__(self, desc, names):
        self.desc, self.names, self.done = desc, list(names), 0
        self._started, self._stop, self._ticker = None, None, None
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - depends on the environment
            self.bar = None
        else:
            self.bar = tqdm(
                total=len(self.names), desc=desc, file=sys.stderr, disable=None
            )

    def __enter__(self):
        if self.bar is not None:
            import threading

            self._stop = threading.Event()
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def _tick(self):
        while not self._stop.wait(self.TICK):
            self._show()

    def _show(self):
        started, done = self._started, self.done
        if started is None or not done:
            return
        seconds = time.perf_counter() - started
        self.bar.set_postfix_str(f"{self.names[done - 1]} {seconds:.0f} s")

    def step(self):
        """Start the next step (the previous one is done)."""
        name = self.names[self.done]
        if self.bar is None:  # pragma: no cover - depends on the environment
            print(
                f"[{self.desc}] {self.done + 1}/{len(self.names)} {name}",
                file=sys.stderr,
                flush=True,
            )
        else:
            if self.done:
                self.bar.update(1)
            self.bar.set_postfix_str(name)
        self._started = time.perf_counter()
        self.done += 1

    def __exit__(self, *exc_info):
        if self._stop is not None:
            self._stop.set()
            self._ticker.join()
        if self.bar is not None:
            if exc_info[0] is None and self.done:
                self.bar.update(1)
            else:
                self.bar.leave = False  # the error line alone, not a bar
            self.bar.close()
        return False


#: The encoder's remedies in Python terms, said in the schema file's.
_SCHEMA_TERMS = {
    "declare it (missing={column: True})": 'declare it in the schema: "missing": true',
    "Declare their domains (bin_edges= or bounds=, categories=)": (
        'Declare their domains in the schema ("bin_edges" or "bounds", "levels")'
    ),
    "declare it (None among its categories or ordinal levels, or "
    "missing={column: True})": (
        'declare it in the schema: null among its "levels", or "missing": true'
    ),
    "declare it (missing={column: True}, or None among its categories or "
    "ordinal levels)": (
        'declare it in the schema: "missing": true, or null among its "levels"'
    ),
}


#: The CoarseDomainWarning's per-column advice,
#: in the schema's terms (patterns: the advice names the columns)
_SCHEMA_PATTERNS = (
    (r"\b(bin_edges|bounds)= (for|or)\b", r'"\1" \2'),
    (r"\btheir bounds= are declared\b", 'their "bounds" are declared'),
    (r"\bDeclare bounds= that hold them\b", 'Declare "bounds" that hold them'),
    (r"\binside bounds= where given\b", 'inside "bounds" where given'),
    (r"\bcategories= for\b", '"levels" for'),
    (
        r"domain_share=([0-9.]+) in make_synthesis_pipeline \(--domain-share "
        r"[0-9.]+ on the command line; ",
        r"--domain-share \1 (",
    ),
    (
        r"For a smaller table use ProjectedGaussianRelease \(",
        "For a smaller table use --method gaussian-release (",
    ),
    (
        r"convert them with pd\.to_numeric before fitting",
        'declare them "numeric" in the schema',
    ),
    (
        r"cast them to bool or declare categories= \(public, free\)",
        'declare them "boolean", or "categorical" with their "levels", in the '
        "schema (public, free)",
    ),
)


def _in_schema_terms(text):
    """The library's remedies said in the schema file's terms."""
    import re

    for python, schema in _SCHEMA_TERMS.items():
        text = text.replace(python, schema)
    for pattern, schema in _SCHEMA_PATTERNS:
        text = re.sub(pattern, schema, text)
    return text


def _error(message):
    """The CLI's one error format (as argparse's): one line, exit status 2."""
    print(f"skdp-synth: error: {message}", file=sys.stderr)
    return 2
