# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.

import logging
from typing import Dict, List

import torch
from fairseq.models.bart import BARTModel

from tapex.processor import get_default_processor

logger = logging.getLogger(__name__)


class TAPEXModelInterface:
    """
    A simple model interface to tapex for online prediction
    """

    def __init__(self, resource_dir, checkpoint_name, table_processor=None):
        self.model = BARTModel.from_pretrained(model_name_or_path=resource_dir,
                                               checkpoint_file=checkpoint_name)
        if torch.cuda.is_available():
            self.model.cuda()
            self.model.half()
            logger.info("TAPEX model is placed on GPU and casted to fp16.")
        self.model.eval()
        if table_processor is not None:
            self.tab_processor = table_processor
        else:
            self.tab_processor = get_default_processor(max_cell_length=15,
                                                       max_input_length=1024)

    def predict(self, question: str, table_context: Dict) -> List:
        # process input
        model_input = self.tab_processor.process_input(table_context, question, []).lower()
        model_output = self.model.translate(
            sentences=[model_input],
            beam=5
        )
        # the model output is a sequence of tokens, we return the list of answers
        answers = model_output[0].split(", ")
        return [answer.strip() for answer in answers]

    def batch_predict(self, questions: List[str], table_contexts: List[Dict], beam: int = 5) -> List[List]:
        model_inputs = [self.tab_processor.process_input(table_context, question, []).lower()
                        for question, table_context in zip(questions, table_contexts)]
        model_outputs = self.model.translate(sentences=model_inputs, beam=beam)
        return [[answer.strip() for answer in output.split(", ")] for output in model_outputs]
