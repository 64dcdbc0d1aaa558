import logging

import numpy as np
import torch
import tqdm
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from ..utils import common_functions as c_f
from ..utils import stat_utils
from ..utils.accuracy_calculator import AccuracyCalculator


class BaseTester:
    def __init__(
        self,
        normalize_embeddings=True,
        use_trunk_output=False,
        batch_size=32,
        dataloader_num_workers=2,
        pca=None,
        data_device=None,
        dtype=None,
        data_and_label_getter=None,
        label_hierarchy_level=0,
        end_of_testing_hook=None,
        dataset_labels=None,
        set_min_label_to_zero=False,
        accuracy_calculator=None,
        visualizer=None,
        visualizer_hook=None,
    ):
        self.normalize_embeddings = normalize_embeddings
        self.pca = int(pca) if pca else None
        self.use_trunk_output = use_trunk_output
        self.batch_size = int(batch_size)
        self.dataloader_num_workers = dataloader_num_workers
        self.data_device = (
            torch.device("cuda" if torch.cuda.is_available() else "cpu")
            if data_device is None
            else data_device
        )
        self.dtype = dtype
        self.data_and_label_getter = (
            c_f.return_input if data_and_label_getter is None else data_and_label_getter
        )
        self.label_hierarchy_level = label_hierarchy_level
        self.end_of_testing_hook = end_of_testing_hook
        self.label_mapper = c_f.LabelMapper(set_min_label_to_zero, dataset_labels).map
        self.accuracy_calculator = (
            AccuracyCalculator() if accuracy_calculator is None else accuracy_calculator
        )
        self.visualizer = visualizer
        self.original_visualizer_hook = visualizer_hook
        self.initialize_label_mapper(dataset_labels, set_min_label_to_zero)
        self.all_accuracies = {}

    def initialize_label_mapper(self, dataset_labels, set_min_label_to_zero):
        self.label_mapper = c_f.LabelMapper(set_min_label_to_zero, dataset_labels).map

    def maybe_normalize(self, embeddings):
        if self.pca:
            for_pca = StandardScaler().fit_transform(embeddings)
            embeddings = PCA(n_components=self.pca).fit_transform(for_pca)
        if self.normalize_embeddings:
            embeddings = torch.nn.functional.normalize(embeddings)
        return embeddings

    def get_embeddings_for_eval(self, trunk_model, embedder_model, input_imgs):
        input_imgs = c_f.to_device(
            input_imgs, device=self.data_device, dtype=self.dtype
        )
        trunk_output = trunk_model(input_imgs)
        if self.use_trunk_output:
            return trunk_output
        return embedder_model(trunk_output)

    def get_all_embeddings(
        self,
        dataset,
        trunk_model,
        embedder_model=None,
        collate_fn=None,
        eval=True,
        return_as_numpy=False,
    ):
        if embedder_model is None:
            embedder_model = c_f.Identity() if hasattr(c_f, "Identity") else torch.nn.Identity()
        if eval:
            trunk_model.eval()
            embedder_model.eval()
        dataloader = c_f.get_eval_dataloader(
            dataset, self.batch_size, self.dataloader_num_workers, collate_fn
        )
        embeddings, labels = self.compute_all_embeddings(
            dataloader, trunk_model, embedder_model
        )
        embeddings = self.maybe_normalize(embeddings)
        if return_as_numpy:
            return embeddings.cpu().numpy(), labels.cpu().numpy()
        return embeddings, labels

    def compute_all_embeddings(self, dataloader, trunk_model, embedder_model):
        s, e = 0, 0
        with torch.no_grad():
            for i, data in enumerate(tqdm.tqdm(dataloader)):
                img, label = self.data_and_label_getter(data)
                label = c_f.process_label(
                    label, "all", self.label_mapper
                )
                q = self.get_embeddings_for_eval(trunk_model, embedder_model, img)
                if label.dim() == 1:
                    label = label.unsqueeze(1)
                if i == 0:
                    labels = torch.zeros(
                        len(dataloader.dataset),
                        label.size(1),
                        device=self.data_device,
                        dtype=label.dtype,
                    )
                    all_q = torch.zeros(
                        len(dataloader.dataset),
                        q.size(1),
                        device=self.data_device,
                        dtype=q.dtype,
                    )
                e = s + q.size(0)
                all_q[s:e] = q
                labels[s:e] = label
                s = e
        return all_q, labels

    def get_accuracy(self, query, reference, query_labels, reference_labels, ref_includes_query):
        # AccuracyCalculator runs faiss on host memory; free the cached blocks of the
        # embedding pass first so that faiss-gpu has room for its index.
        torch.cuda.empty_cache()
        return self.accuracy_calculator.get_accuracy(
            query,
            query_labels,
            reference,
            reference_labels,
            ref_includes_query,
        )

    def set_reference_and_query(self, embeddings_and_labels, query_split_name):
        assert query_split_name in embeddings_and_labels, "{} is not one of the splits".format(query_split_name)
        query_embeddings, query_labels = embeddings_and_labels[query_split_name]
        return query_embeddings, query_labels

    def embeddings_come_from_same_source(self, query_split_name, reference_split_names):
        return [query_split_name] == reference_split_names

    def label_levels_to_evaluate(self, query_labels):
        num_levels_available = query_labels.shape[1]
        if self.label_hierarchy_level == "all":
            return range(num_levels_available)
        elif isinstance(self.label_hierarchy_level, int):
            assert self.label_hierarchy_level < num_levels_available
            return [self.label_hierarchy_level]
        elif c_f.is_list_or_tuple(self.label_hierarchy_level):
            assert max(self.label_hierarchy_level) < num_levels_available
            return self.label_hierarchy_level

    def calculate_memory_footprint(self):
        if self.data_device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(self.data_device) / 1024.0**2
            logging.info("peak device memory during testing: %.1f MB" % peak)

    def do_knn_and_accuracies(self, accuracies, embeddings_and_labels, query_split_name, reference_split_names):
        query_embeddings, query_labels = self.set_reference_and_query(
            embeddings_and_labels, query_split_name
        )
        reference_embeddings = torch.cat(
            [embeddings_and_labels[x][0] for x in reference_split_names], dim=0
        )
        reference_labels = torch.cat(
            [embeddings_and_labels[x][1] for x in reference_split_names], dim=0
        )
        ref_includes_query = self.embeddings_come_from_same_source(
            query_split_name, reference_split_names
        )
        for L in self.label_levels_to_evaluate(query_labels):
            curr_query_labels = query_labels[:, L]
            curr_reference_labels = reference_labels[:, L]
            a = self.get_accuracy(
                query_embeddings,
                reference_embeddings,
                curr_query_labels,
                curr_reference_labels,
                ref_includes_query,
            )
            for metric, v in a.items():
                keyname = self.accuracies_keyname(metric, label_hierarchy_level=L)
                accuracies[keyname] = v
        if len(self.label_levels_to_evaluate(query_labels)) > 1:
            self.calculate_average_accuracies(accuracies, self.accuracy_calculator.get_curr_metrics(), self.label_levels_to_evaluate(query_labels))

    def calculate_average_accuracies(self, accuracies, metrics, label_levels):
        for m in metrics:
            keyname = self.accuracies_keyname(m, "average")
            summed_accuracy = 0
            for L in label_levels:
                curr_key = self.accuracies_keyname(m, label_hierarchy_level=L)
                summed_accuracy += accuracies[curr_key]
            accuracies[keyname] = summed_accuracy / len(label_levels)

    def accuracies_keyname(self, metric, label_hierarchy_level=0, average=False):
        if average:
            return "AVERAGE_%s" % metric
        if label_hierarchy_level == "all" or c_f.is_list_or_tuple(label_hierarchy_level):
            raise ValueError("label_hierarchy_level must be an int or 'average'")
        if label_hierarchy_level == 0:
            return metric
        return "%s_level%d" % (metric, label_hierarchy_level)

    def get_splits_to_eval(self, splits_to_eval, dataset_dict):
        if splits_to_eval is None:
            return [(k, [k]) for k in dataset_dict]
        return splits_to_eval

    def test(self, dataset_dict, epoch, trunk_model, embedder_model=None, splits_to_eval=None, collate_fn=None, **kwargs):
        logging.info("Evaluating epoch {}".format(epoch))
        if embedder_model is None:
            embedder_model = torch.nn.Identity()
        trunk_model.eval()
        embedder_model.eval()
        splits_to_eval = self.get_splits_to_eval(splits_to_eval, dataset_dict)
        splits_to_compute_embeddings = set(x for y in splits_to_eval for x in [y[0]] + y[1])
        embeddings_and_labels = {}
        for split_name in splits_to_compute_embeddings:
            logging.info("Getting embeddings for the {} split".format(split_name))
            embeddings_and_labels[split_name] = self.get_all_embeddings(
                dataset_dict[split_name], trunk_model, embedder_model, collate_fn
            )
        self.calculate_memory_footprint()
        self.all_accuracies = {}
        for query_split_name, reference_split_names in splits_to_eval:
            logging.info(f"Computing accuracy for the {query_split_name} split w.r.t {reference_split_names}")
            curr_accuracies = {}
            self.do_knn_and_accuracies(curr_accuracies, embeddings_and_labels, query_split_name, reference_split_names)
            self.all_accuracies[query_split_name] = curr_accuracies
        if self.end_of_testing_hook is not None:
            self.end_of_testing_hook(self)
        return self.all_accuracies
