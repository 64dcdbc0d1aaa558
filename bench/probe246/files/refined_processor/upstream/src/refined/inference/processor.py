import os
from typing import Any, Dict, Iterable, List, Optional, Union

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from refined.data_types.base_types import Entity, Span
from refined.data_types.doc_types import Doc
from refined.data_types.modelling_types import BatchedElementsTns, ModelReturn
from refined.dataset_reading.entity_linking.document_dataset import DocIterDataset
from refined.doc_preprocessing.preprocessor import PreprocessorInferenceOnly
from refined.doc_preprocessing.wikidata_mapper import WikidataMapper
from refined.model_components.config import NER_TAG_TO_IX, ModelConfig
from refined.model_components.refined_model import RefinedModel
from refined.resource_management.loaders import load_human_qcode
from refined.resource_management.resource_manager import ResourceManager
from refined.utilities.general_utils import get_logger, wrap_tensors
from refined.utilities.preprocessing_utils import convert_doc_to_tensors

LOG = get_logger(__name__)


class Refined(object):
    """
    This class provides methods to process text.
    It wraps the pretrained ReFinED model (entity typing, entity description, candidate generation
    and entity disambiguation all in one forward pass).
    """

    def __init__(
        self,
        model_file_or_model: Union[str, RefinedModel],
        model_config_file_or_model_config: Union[str, ModelConfig],
        entity_set: str = "wikipedia",
        data_dir: Optional[str] = None,
        n_gpu: int = 1,
        use_cpu: bool = False,
        device: Optional[str] = None,
        debug: bool = False,
        backward_coref: bool = False,
        max_seq: int = 510,
        preprocessor: Optional[PreprocessorInferenceOnly] = None,
        return_titles: bool = True,
        download_files: bool = True,
        use_precomputed_descriptions: bool = True,
        use_fp16: bool = True,
    ):
        self.max_seq = max_seq
        self.debug = debug
        self.backward_coref = backward_coref
        self.return_titles = return_titles
        self.use_fp16 = use_fp16
        self.n_gpu = n_gpu

        if use_cpu:
            self.device = torch.device("cpu")
        elif device is not None:
            self.device = torch.device(device)
        else:
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        resource_manager = ResourceManager(
            entity_set=entity_set,
            data_dir=data_dir,
            model_name=None,
            load_descriptions_tns=not use_precomputed_descriptions,
            load_qcode_to_title=return_titles,
        )
        if download_files:
            resource_manager.download_data_if_needed()
            resource_manager.download_additional_files_if_needed()

        if preprocessor is None:
            self.preprocessor = PreprocessorInferenceOnly(
                data_dir=data_dir,
                debug=debug,
                max_candidates=30,
                transformer_name="roberta-base",
                ner_tag_to_ix=NER_TAG_TO_IX,
                entity_set=entity_set,
                use_precomputed_description_embeddings=use_precomputed_descriptions,
            )
        else:
            self.preprocessor = preprocessor

        self.wikidata_mapper = WikidataMapper(resource_manager=resource_manager)
        self.human_qcodes = load_human_qcode(resource_manager.get_data_files()["human_qcodes"])

        if isinstance(model_file_or_model, RefinedModel):
            self.model = model_file_or_model
        else:
            self.model = RefinedModel.from_pretrained(
                model_file=model_file_or_model,
                model_config_file=model_config_file_or_model_config,
                preprocessor=self.preprocessor,
                use_precomputed_descriptions=use_precomputed_descriptions,
            )

        if use_precomputed_descriptions:
            description_file = resource_manager.get_data_files()["precomputed_entity_descriptions_emb"]
            self.precomputed_descriptions = torch.load(description_file, map_location="cpu")
            if self.device.type == "cuda":
                # stored as fp16 to halve the 6GB of description embeddings on the GPU
                self.precomputed_descriptions = self.precomputed_descriptions.half().cuda(self.device)
            self.model.entity_disambiguation.set_precomputed_descriptions(self.precomputed_descriptions)

        self.model.eval()
        self.model.to(self.device)
        if self.n_gpu > 1 and self.device.type == "cuda":
            self.model = torch.nn.DataParallel(self.model)

        self.special_span_types = {"DATE", "CARDINAL", "MONEY", "PERCENT", "TIME", "ORDINAL", "QUANTITY"}

    def process_text(
        self,
        text: str,
        spans: Optional[List[Span]] = None,
        ner_threshold: float = 0.5,
        prune_ner_types: bool = True,
        max_batch_size: int = 16,
        apply_class_check: bool = False,
        return_special_spans: bool = True,
    ) -> List[Span]:
        """
        Performs inference on a document. Tokenizes document, runs mention detection (or uses provided spans),
        and entity disambiguation.
        """
        if spans is not None:
            doc = Doc.from_text_with_spans(
                text, spans, self.preprocessor, backward_coref=self.backward_coref
            )
        else:
            doc = Doc.from_text(text, preprocessor=self.preprocessor, backward_coref=self.backward_coref)

        tns: Iterable[BatchedElementsTns] = convert_doc_to_tensors(
            doc,
            self.preprocessor,
            collate=True,
            max_batch_size=max_batch_size,
            sort_by_tokens=False,
            max_seq=self.max_seq,
        )
        spans = self.process_tensors(tns=tns, ner_threshold=ner_threshold)

        if prune_ner_types:
            spans = self._prune_types(spans)
        if apply_class_check:
            spans = self._apply_class_check(spans)
        if not return_special_spans:
            spans = [s for s in spans if s.coarse_type == "MENTION"]
        return spans

    def process_tensors(self, tns: Iterable[BatchedElementsTns], ner_threshold: float = 0.5) -> List[Span]:
        all_spans: List[Span] = []
        for batch_idx, batch in enumerate(tns):
            batch = batch._replace(**{k: v.to(self.device, non_blocking=True) for k, v in batch._asdict().items()
                                      if isinstance(v, torch.Tensor)})
            with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.use_fp16):
                batch_outputs: ModelReturn = self.model(
                    token_ids=batch.token_id_values,
                    token_acc_sums=batch.token_acc_sum_values,
                    entity_mask=batch.entity_mask_values,
                    class_targets=batch.class_target_values,
                    attention_mask=batch.attention_mask_values,
                    token_type_ids=batch.token_type_values,
                    candidate_entity_targets=batch.candidate_target_values,
                    candidate_pem_values=batch.pem_values,
                    candidate_classes=batch.candidate_class_values,
                    candidate_pme_values=batch.pme_values,
                    entity_index_mask_values=batch.entity_index_mask_values,
                    batch_elements_included=batch.batch_elements_included,
                    spans=batch.spans,
                    cand_ids=batch.candidate_qcode_values,
                    cand_desc=batch.candidate_desc,
                    ner_labels=batch.ner_labels,
                )
            spans = self._process_outputs(batch, batch_outputs, ner_threshold)
            all_spans.extend(spans)
        return all_spans

    def _process_outputs(self, batch, outputs: ModelReturn, ner_threshold: float) -> List[Span]:
        spans = outputs.entity_spans
        if spans is None:
            return []
        ed_scores = outputs.ed_activations.float().softmax(dim=-1).cpu()
        et_scores = outputs.et_activations.float().sigmoid().cpu()
        for span, ed, et in zip(spans, ed_scores, et_scores):
            cand_ids = span.candidate_entities
            top_k = min(len(cand_ids), ed.shape[-1])
            scores, idx = ed[:top_k].topk(min(top_k, 5)) if top_k > 0 else (torch.tensor([]), torch.tensor([]))
            span.top_k_predicted_entities = [
                (Entity(wikidata_entity_id=cand_ids[i][0]), round(s.item(), 4)) for s, i in zip(scores, idx)
            ]
            if span.top_k_predicted_entities:
                span.predicted_entity = span.top_k_predicted_entities[0][0]
            span.predicted_entity_types = [
                (self.preprocessor.index_to_class[i], round(p.item(), 4))
                for i, p in enumerate(et)
                if p.item() >= ner_threshold
            ]
            if self.return_titles and span.predicted_entity is not None:
                qcode = span.predicted_entity.wikidata_entity_id
                span.predicted_entity.wikipedia_entity_title = self.wikidata_mapper.map_qcode_to_wikipedia_title(qcode)
        return spans

    def _prune_types(self, spans: List[Span]) -> List[Span]:
        for span in spans:
            if span.predicted_entity_types:
                span.predicted_entity_types = sorted(span.predicted_entity_types, key=lambda x: -x[1])[:3]
        return spans

    def _apply_class_check(self, spans: List[Span]) -> List[Span]:
        for span in spans:
            if span.predicted_entity is None or span.coarse_mention_type is None:
                continue
            qcode = span.predicted_entity.wikidata_entity_id
            if span.coarse_mention_type == "PERSON" and qcode not in self.human_qcodes:
                span.predicted_entity = Entity(wikidata_entity_id=None)
        return spans

    def process_documents(
        self,
        docs: List[Doc],
        max_batch_size: int = 32,
        num_workers: int = 4,
        ner_threshold: float = 0.5,
    ) -> List[Doc]:
        dataset = DocIterDataset(docs, preprocessor=self.preprocessor, max_seq=self.max_seq)
        loader = torch.utils.data.DataLoader(
            dataset,
            batch_size=None,
            num_workers=num_workers,
            pin_memory=True,
            collate_fn=lambda x: x,
        )
        results = []
        for batch in tqdm(loader, desc="ReFinED", disable=len(docs) < 100):
            spans = self.process_tensors([batch], ner_threshold=ner_threshold)
            results.append(spans)
        return results

    @classmethod
    def from_pretrained(
        cls,
        model_name: str,
        entity_set: str,
        data_dir: Optional[str] = None,
        use_precomputed_descriptions: bool = True,
        device: Optional[str] = None,
        download_files: bool = True,
        **kwargs,
    ) -> "Refined":
        """
        Load a pretrained ReFinED model.

        :param model_name: "wikipedia_model", "wikipedia_model_with_numbers", "aida_model" or a local path
        :param entity_set: "wikipedia" or "wikidata"
        :param device: e.g. "cuda:0"; defaults to the first GPU if one is available
        """
        if data_dir is None:
            data_dir = os.path.join(os.path.expanduser("~"), ".cache", "refined")

        if os.path.isdir(model_name):
            model_file = os.path.join(model_name, "model.pt")
            model_config_file = os.path.join(model_name, "config.json")
        else:
            resource_manager = ResourceManager(entity_set=entity_set, data_dir=data_dir, model_name=model_name)
            model_files = resource_manager.get_model_files(download=download_files)
            model_file = model_files["model"]
            model_config_file = model_files["model_config"]

        return cls(
            model_file_or_model=model_file,
            model_config_file_or_model_config=model_config_file,
            entity_set=entity_set,
            data_dir=data_dir,
            use_precomputed_descriptions=use_precomputed_descriptions,
            device=device,
            download_files=download_files,
            **kwargs,
        )


if __name__ == "__main__":
    refined = Refined.from_pretrained(model_name="wikipedia_model", entity_set="wikipedia", device="cuda:0")
    print(refined.process_text("England qualified for the 2022 World Cup in Qatar under Gareth Southgate."))
