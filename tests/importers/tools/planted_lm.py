"""An offline lm-evaluation-harness model with planted answers (``--model planted``).

``--model_args pretrained=planted-a,arm=a``: it answers ``doc["answer"]`` where
``doc["<arm>_correct"]`` is true and a wrong answer elsewhere (the harness's ``dummy``
model cannot plant answers: it always says "lol"). Run through ``run_lm_eval.py``, which
registers it and starts the harness's own command line.
"""

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model


@register_model("planted")
class PlantedLM(LM):
    def __init__(self, arm: str = "a", pretrained: str = "planted", **_) -> None:
        super().__init__()
        self.arm = arm

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        pairs = dict(part.split("=", 1) for part in arg_string.split(",") if part)
        return cls(**pairs)

    def generate_until(self, requests, disable_tqdm: bool = False):
        return [r.doc["answer"] if r.doc[f"{self.arm}_correct"] else "I do not know"
                for r in requests]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        return [(-1.0, False) for _ in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        return [-1.0 for _ in requests]
