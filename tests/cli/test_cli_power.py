"""`langchef power`: the limit for n goldens, and the goldens for a limit."""

import math

import pytest
from scipy import stats

from ..core.test_design import reference_binary_limit
from .conftest import one_sentence

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.80)  # scipy: z_{1-alpha/2} + z_power


def binary_limit(n, rate):
    # The readout's rule reaches 80% power here (scipy/statsmodels reference in test_design).
    return reference_binary_limit(n, rate)


def test_limit_for_a_number_of_goldens(langchef):
    result = langchef("power", "--goldens", 90, "--discordant-rate", 0.2, "--json")
    assert result.code == 0, result.stderr
    assert result.json["detection_limit"] == pytest.approx(binary_limit(90, 0.2), rel=1e-8)
    human = langchef("power", "--goldens", 90, "--discordant-rate", 0.2)
    assert f"{100 * binary_limit(90, 0.2):.1f} points" in human.stdout and "90 goldens" in human.stdout
    assert "at least 0.8 power" in human.stdout


def test_the_exact_power_at_the_limit_is_printed_and_at_least_the_target(langchef):
    # The limit holds at the Wilson bound on the rate; at the assumed rate itself the CLI
    # prints the exact power of the readout's rule (Tango and exact McNemar), at least the
    # target (issue 28).
    result = langchef("power", "--goldens", 90, "--discordant-rate", 0.2, "--json")
    exact = result.json["exact_power"]
    assert 0.8 <= exact < 1.0
    human = langchef("power", "--goldens", 90, "--discordant-rate", 0.2)
    assert f"power {exact:.3f}" in human.stdout


def test_goldens_for_an_effect_and_both_at_once(langchef):
    result = langchef("power", "--effect", 0.05, "--discordant-rate", 0.2, "--goldens", 90,
                      "--json")
    assert result.code == 0, result.stderr
    needed = result.json["goldens_needed"]
    assert binary_limit(needed, 0.2) <= 0.05 < binary_limit(needed - 1, 0.2)
    assert result.json["enough"] is False


def test_continuous_scores_plan_with_the_sd(langchef):
    result = langchef("power", "--goldens", 400, "--sd", 0.3, "--effect", 0.02, "--json")
    assert result.code == 0, result.stderr
    assert result.json["detection_limit"] == pytest.approx(Z * 0.3 / 20, rel=1e-12)
    assert result.json["goldens_needed"] == math.ceil((Z * 0.3 / 0.02) ** 2)


@pytest.mark.parametrize("arguments, words", [
    (["--goldens", "90"], "exactly one of --discordant-rate"),
    (["--goldens", "90", "--discordant-rate", "0.2", "--sd", "0.3"], "exactly one of"),
    (["--discordant-rate", "0.2"], "give --goldens N"),
    (["--goldens", "0", "--discordant-rate", "0.2"], "--goldens 0: a paired comparison needs at "
                                                     "least one golden"),
    (["--goldens", "90", "--discordant-rate", "1.5"], "discordant_rate must be a share"),
])
def test_bad_questions_are_one_sentence_and_exit_2(langchef, arguments, words):
    result = langchef("power", *arguments)
    assert result.code == 2 and words in one_sentence(result.stderr)


def test_too_few_goldens_to_ever_decide_are_said_so(langchef):
    """Five goldens cannot give the exact gate the 6 one-way flips it needs at alpha 0.05."""
    result = langchef("power", "--goldens", 5, "--discordant-rate", 0.1, "--json")
    assert result.code == 0, result.stderr
    assert result.json["detection_limit"] is None and "exact_power" not in result.json
    human = langchef("power", "--goldens", 5, "--discordant-rate", 0.1)
    assert "no difference is detectable at alpha 0.05" in human.stdout and "inf" not in human.stdout
