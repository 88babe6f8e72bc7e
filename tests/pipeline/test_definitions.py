"""The definitions load, and the graph is the one ARCHITECTURE §3 describes."""

import dagster as dg

from langchef_pipeline import definitions


def test_definitions_are_loadable():
    dg.Definitions.validate_loadable(definitions.defs)


def test_graph_has_every_stage_with_descriptions_groups_and_kinds():
    graph = definitions.defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {"design", "goldens", "arm_runs", "qrels", "pools", "item_scores", "paired_comparison",
            "criterion_attribution", "retrieval_comparison", "readout", "readout_report",
            "report_index"} <= keys
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.description, key
        assert node.group_name in {"inputs", "scoring", "comparison", "reporting", "drift"}, key
        assert node.kinds, key


def test_gates_are_blocking_checks():
    graph = definitions.defs.resolve_asset_graph()
    checks = {key.name: graph.get_check_spec(key) for key in graph.asset_check_keys}
    for name in ("design_is_approved", "approved_before_traffic", "runs_are_complete",
                 "judge_is_pinned", "pools_are_identical", "zero_positive_coverage",
                 "goldens_are_valid", "arm_runs_are_valid"):
        assert checks[name].blocking, name
