# Copyright (c) 2024, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
import logging
from typing import Dict, List, Optional

import pandas as pd

from nemo_curator.modifiers import DocumentModifier
from nemo_curator.pii.constants import DEFAULT_BATCH_SIZE, DEFAULT_LANGUAGE
from nemo_curator.utils.decorators import batched
from nemo_curator.utils.distributed_utils import load_object_on_worker

__all__ = ["PiiModifier"]

DEFAULT_SPACY_MODEL = "en_core_web_lg"
DEFAULT_SPACY_TRF_MODEL = "en_core_web_trf"

SUPPORTED_ENTITIES = [
    "ADDRESS",
    "CREDIT_CARD",
    "EMAIL_ADDRESS",
    "DATE_TIME",
    "IP_ADDRESS",
    "LOCATION",
    "PERSON",
    "URL",
    "US_SSN",
    "US_PASSPORT",
    "US_DRIVER_LICENSE",
    "PHONE_NUMBER",
]


def _load_spacy_pipeline(model_name: str, device: str):
    import spacy

    if device == "gpu":
        spacy.require_gpu()
    else:
        # Use the GPU if spaCy can see one (cupy + thinc), otherwise stay on CPU.
        spacy.prefer_gpu()
    return spacy.load(model_name)


class PiiModifier(DocumentModifier):
    """
    This class is responsible for redacting PII from a given dataset.

    Args:
        language (str): 2 character language code, defaults to "en".
        supported_entities (List[str], optional): List of PII entities to redact, defaults to all.
        anonymize_action (str): One of "redact", "hash", "mask" or "replace".
        batch_size (int): Number of documents passed to spaCy's nlp.pipe at once.
        device (str): "gpu" to run the spaCy NER pipeline on a GPU, "cpu" otherwise.
        **kwargs: Extra arguments for the chosen anonymize_action (e.g. chars_to_mask).
    """

    def __init__(
        self,
        language: str = DEFAULT_LANGUAGE,
        supported_entities: Optional[List[str]] = None,
        anonymize_action: str = "redact",
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str = "gpu",
        use_transformer_ner: bool = False,
        **kwargs,
    ):
        super().__init__()

        self.language = language
        self.supported_entities = supported_entities or SUPPORTED_ENTITIES
        self.anonymize_action = anonymize_action
        self.kwargs = kwargs

        self.batch_size = batch_size
        self.device = device
        self.spacy_model = DEFAULT_SPACY_TRF_MODEL if use_transformer_ner else DEFAULT_SPACY_MODEL

    @batched
    def modify_document(self, text: pd.Series, partition_info: Dict = None):
        import logging

        logging.basicConfig(
            format="%(asctime)s %(levelname)s:%(message)s",
            level=logging.INFO,
            datefmt="%Y-%m-%d %H:%M:%S",
        )

        deidentifier = load_object_on_worker(
            "deidentifier", self.load_deidentifier, {}
        )
        try:
            output: List[str] = deidentifier.deidentify_text_batch(
                text.tolist(), self.batch_size
            )
        except Exception as e:
            logging.error(
                f"Encountered error {str(e)} in partition {partition_info['number']}"
            )
            return pd.Series([True], index=text.index)
        output: pd.Series = pd.Series(output, text.index)
        return output

    def load_deidentifier(self):
        """
        Helper function to load the de-identifier
        """
        from nemo_curator.pii.algorithms.analyzer import PiiAnalyzer
        from nemo_curator.pii.algorithms.anonymizer import PiiAnonymizer

        nlp = _load_spacy_pipeline(self.spacy_model, self.device)
        analyzer = PiiAnalyzer(
            nlp=nlp,
            language=self.language,
            supported_entities=self.supported_entities,
        )
        anonymizer = PiiAnonymizer(
            analyzer=analyzer,
            anonymize_action=self.anonymize_action,
            **self.kwargs,
        )
        logging.info(f"Loaded PII de-identifier on {self.device}")
        return anonymizer


def redact_column(
    df: pd.DataFrame,
    text_field: str = "text",
    device: str = "gpu",  # forwarded to PiiModifier
    batch_size: int = DEFAULT_BATCH_SIZE,
    **kwargs,
) -> pd.DataFrame:
    """
    Convenience wrapper used by the example scripts: redact one text column of a
    pandas partition in place and return the partition.
    """
    modifier = PiiModifier(device=device, batch_size=batch_size, **kwargs)
    df[text_field] = modifier.modify_document(df[text_field])
    return df


def count_entities(texts: List[str], device: str = "cpu") -> Dict[str, int]:
    """
    Quick diagnostic: how many entities of each supported type spaCy's NER finds in
    a small sample. Always runs the small CPU model.
    """
    nlp = _load_spacy_pipeline(DEFAULT_SPACY_MODEL, device)
    counts: Dict[str, int] = {}
    for doc in nlp.pipe(texts, batch_size=64):
        for ent in doc.ents:
            counts[ent.label_] = counts.get(ent.label_, 0) + 1
    return counts
