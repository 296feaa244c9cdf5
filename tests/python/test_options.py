"""tmagemm.Options (python/tmagemm/_options.py): field checks, the text form the torch.library ops carry, and the
environment/defaults rule. CPU test."""

import pytest

import tmagemm
from tmagemm import Options


def test_default_is_empty_text():
    assert Options().to_string() == ""
    assert Options.from_string("") == Options()


@pytest.mark.parametrize(
    "opts",
    [
        Options(tuning="heuristic"),
        Options(tuning="cached_only", cublaslt=False, skinny=True),
        Options(choice_regex="^persistent_tma_128x256", sm_carveout=8, allow_reduced_precision_reduction=True),
        Options(persistent_tma=False, fallback=False, pad_tma=False),
        Options(tuning="cached_only", m_buckets=False),
        Options(library_ranks_per_m=False),
        Options(sustained_tuning=False, m_buckets=True),
    ],
)
def test_text_round_trip(opts):
    text = opts.to_string()
    assert text  # a non-default option always shows
    assert Options.from_string(text) == opts


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"tuning": "fastest"}, "options.tuning"),
        ({"cublaslt": 1}, "options.cublaslt must be a bool"),
        ({"m_buckets": "yes"}, "options.m_buckets must be a bool"),
        ({"library_ranks_per_m": 0}, "options.library_ranks_per_m must be a bool"),
        ({"sustained_tuning": "no"}, "options.sustained_tuning must be a bool"),
        ({"sm_carveout": -1}, "options.sm_carveout"),
        ({"sm_carveout": True}, "options.sm_carveout"),
        ({"choice_regex": "a;b"}, "without ';'"),
    ],
)
def test_bad_field_is_named(kwargs, words):
    with pytest.raises(tmagemm.InvalidArgumentError, match=words) as info:
        Options(**kwargs)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["tuning", "nosuch=1", "cublaslt=yes"])
def test_bad_text_is_named(text):
    with pytest.raises(ValueError, match="options"):
        Options.from_string(text)
