"""An Inspect AI task whose answers are planted: the solver answers the target only on the
samples the dataset marks correct for the arm (``-T arm=a``), so the broke/fixed counts of a
comparison are known in advance. ``-T flaky=g02,g09`` flips those samples in epoch 2.

The solver asks the offline ``mockllm/model`` for a planted output that carries its own
usage: without usage mockllm counts tokens with tiktoken, which downloads its encoding.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, includes, match, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

WRONG = "I do not know"


@solver
def planted(arm: str = "a", flaky: str | list = ""):
    # `-T flaky=g02,g09` arrives as a list, `-T flaky=g02` as text
    flaky = [str(item) for item in flaky] if isinstance(flaky, list) else str(flaky).split(",")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        correct = bool(state.metadata[f"{arm}_correct"])
        if state.epoch == 2 and str(state.sample_id) in flaky:
            correct = not correct
        answer = state.target.text if correct else WRONG
        output = ModelOutput.from_content(model="mockllm/model", content=answer)
        output.usage = ModelUsage(input_tokens=10, output_tokens=len(answer),
                                  total_tokens=10 + len(answer),
                                  total_cost=0.0001 * len(answer))
        model = get_model("mockllm/model", memoize=False, custom_outputs=[output])
        state.output = await model.generate(state.messages)
        state.messages.append(state.output.message)
        return state
    return solve


@scorer(metrics=[mean()])
def answer_length():
    """A numeric score: the answer's length in characters."""
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=float(len(state.output.completion)))
    return score


@task
def planted_qa(arm: str = "a", data: str = "samples.jsonl", flaky: str | list = ""):
    return Task(dataset=json_dataset(data, name="planted_qa"),
                solver=planted(arm=arm, flaky=flaky),
                scorer=[match(location="exact"), includes(), answer_length()])
