# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import logging
from typing import Dict, List

from fairseq.models.bart import BARTModel

from tapex.processor import get_default_processor

logger = logging.getLogger(__name__)


class TAPEXModelInterface:
    """
    A simple model interface to tapex for online prediction
    """

    def __init__(self, resource_dir, checkpoint_name, table_processor=None, use_gpu=True):
        self.model = BARTModel.from_pretrained(model_name_or_path=resource_dir,
                                               checkpoint_file=checkpoint_name)
        if use_gpu:
            # the hub interface moves every encoded batch to the device of its parameters
            self.model = self.model.cuda()
        self.model.eval()
        if table_processor is not None:
            self.tab_processor = table_processor
        else:
            self.tab_processor = get_default_processor(max_cell_length=15, max_input_length=1024)

    def predict(self, question: str, table_context: Dict) -> List[str]:
        # process input
        model_input = self.tab_processor.process_input(table_context, question, []).lower()
        # beam search with the default fairseq generation arguments
        model_output = self.model.translate(
            sentences=[model_input],
            beam=5
        )
        return model_output

    def predict_batch(self, questions: List[str], table_contexts: List[Dict], beam: int = 5) -> List[str]:
        assert len(questions) == len(table_contexts), "each question needs exactly one table"
        model_inputs = [
            self.tab_processor.process_input(table_context, question, []).lower()
            for question, table_context in zip(questions, table_contexts)
        ]
        logger.info("Predicting {} examples with beam size {}".format(len(model_inputs), beam))
        return self.model.translate(sentences=model_inputs, beam=beam)
