"""tmagemm.Options: per-call options of the C++ library (include/tmagemm/options.hpp). A field left at None keeps
the value of the TMAGEMM_* environment variable (or the library default), read at each call as in C++."""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

_TUNINGS = ("benchmark", "heuristic", "cached_only")


@dataclass(frozen=True)
class Options:
    """tuning: 'benchmark' (time every applicable choice at the first call of a problem and remember the winner),
    'heuristic' (no timing) or 'cached_only' (the tuning DB's winner, else the heuristic choice; never tunes).
    persistent_tma, fallback, cublaslt, skinny, pad_tma: allow or forbid a backend. allow_reduced_precision_reduction:
    as torch's allow_bf16_reduced_precision_reduction. choice_regex: only choices whose name matches (ECMAScript).
    sm_carveout: leave that many SMs free. m_buckets: the tuning key holds M by shape bucket (one tuning serves every
    M of a bucket; README "Shape buckets"); False keeps M exact. library_ranks_per_m: at an M of a bucket other than
    its largest, cuBLASLt's ranks are timed at that M once, against the bucket's winner where that is not cuBLASLt's
    first pick (benchmark tuning only); False runs the bucket's winner as is. sustained_tuning: a compute-bound
    problem larger than L2 has its near-tied finalists timed alone back to back too, at the card's power cap as a
    loop runs them (benchmark tuning only; about 2 s more a tuning); False leaves that out."""

    tuning: str | None = None
    persistent_tma: bool | None = None
    fallback: bool | None = None
    cublaslt: bool | None = None
    skinny: bool | None = None
    pad_tma: bool | None = None
    allow_reduced_precision_reduction: bool | None = None
    choice_regex: str | None = None
    sm_carveout: int | None = None
    m_buckets: bool | None = None
    library_ranks_per_m: bool | None = None
    sustained_tuning: bool | None = None

    def __post_init__(self):
        from ._errors import InvalidArgumentError

        if self.tuning is not None and self.tuning not in _TUNINGS:
            raise InvalidArgumentError(f"options.tuning must be one of {', '.join(_TUNINGS)}; got {self.tuning!r}")
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or f.name in ("tuning", "choice_regex", "sm_carveout"):
                continue
            if not isinstance(v, bool):
                raise InvalidArgumentError(f"options.{f.name} must be a bool or None; got {v!r}")
        if self.choice_regex is not None and (not isinstance(self.choice_regex, str) or ";" in self.choice_regex):
            raise InvalidArgumentError(
                f"options.choice_regex must be a str without ';' (the separator of to_string()) or None; "
                f"got {self.choice_regex!r}"
            )
        if self.sm_carveout is not None and (
            isinstance(self.sm_carveout, bool) or not isinstance(self.sm_carveout, int) or self.sm_carveout < 0
        ):
            raise InvalidArgumentError(f"options.sm_carveout must be an int >= 0 or None; got {self.sm_carveout!r}")
        object.__setattr__(self, "_desc", tuple(getattr(self, f.name) for f in fields(self)))

    def to_string(self) -> str:
        """A canonical text form ('' for all defaults): the form the torch.library ops take, so that a compiled
        graph carries the options as a constant."""
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if isinstance(v, bool):
                v = int(v)
            parts.append(f"{f.name}={v}")
        return ";".join(parts)

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def from_string(text: str) -> "Options":
        """The inverse of to_string()."""
        from ._errors import InvalidArgumentError

        if not text:
            return _DEFAULT
        kinds = {f.name: f for f in fields(Options)}
        values = {}
        for part in text.split(";"):
            name, sep, value = part.partition("=")
            if not sep or name not in kinds:
                raise InvalidArgumentError(f"options: cannot read {part!r} of {text!r}")
            if name in ("tuning", "choice_regex"):
                values[name] = value
            elif name == "sm_carveout":
                values[name] = int(value)
            elif value in ("0", "1"):
                values[name] = value == "1"
            else:
                raise InvalidArgumentError(f"options: {name} must be 0 or 1 in {text!r}")
        return Options(**values)


_DEFAULT = Options()


def _bad(options):
    from ._errors import InvalidArgumentError

    return InvalidArgumentError(f"options must be a tmagemm.Options or None; got {type(options).__name__}")


def desc(options: Options | None):
    """What tmagemm._C takes: None (environment and defaults) or the tuple of fields."""
    if options is None or options is _DEFAULT:
        return None
    if not isinstance(options, Options):
        raise _bad(options)
    return options._desc


def text(options: Options | None) -> str:
    """What the torch.library ops take: Options.to_string() ('' for None)."""
    if options is None:
        return ""
    if not isinstance(options, Options):
        raise _bad(options)
    return options.to_string()
