#
# Copyright (c) 2022, NVIDIA CORPORATION.
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
#
from typing import List

import numpy as np
from feast import FeatureStore, ValueType

from merlin.dag import ColumnSelector
from merlin.schema import ColumnSchema, Schema
from merlin.systems.dag.ops.operator import InferenceOperator
from merlin.table import TensorTable

# Feast value types mapped to numpy dtypes (list types are ragged / multi-hot)
feast_2_numpy = {
    ValueType.INT64: np.int64,
    ValueType.INT32: np.int32,
    ValueType.FLOAT: np.float32,
    ValueType.DOUBLE: np.float64,
    ValueType.STRING: str,
    ValueType.INT64_LIST: np.int64,
    ValueType.INT32_LIST: np.int32,
    ValueType.FLOAT_LIST: np.float32,
    ValueType.DOUBLE_LIST: np.float64,
}


class QueryFeast(InferenceOperator):
    """
    The QueryFeast operator is responsible for ensuring that your feast feature store [1]
    can communicate correctly with tritonserver for the ensemble feast feature look ups.

    References
    ----------
    [1] https://docs.feast.dev/
    """

    @classmethod
    def from_feature_view(
        cls,
        store: FeatureStore,
        view: str,
        column: str,
        output_prefix: str = None,
        include_id: bool = False,
    ):
        """Configures a QueryFeast operator from a feature view of a feature store."""
        feature_view = store.get_feature_view(view)
        entity_id = feature_view.entities[0]

        features = []
        mh_features = []

        input_schema = Schema([ColumnSchema(column, dtype=np.int32)])

        output_schema = Schema([])
        for feature in feature_view.features:
            feature_dtype, is_list, is_ragged = feast_2_numpy[feature.dtype.to_value_type()], False, False
            if feature.dtype.to_value_type().name.endswith("_LIST"):
                is_list, is_ragged = True, True
                mh_features.append(feature.name)
            else:
                features.append(feature.name)

            name = cls._prefixed_name(output_prefix, feature.name)
            output_schema[name] = ColumnSchema(
                name, dtype=feature_dtype, is_list=is_list, is_ragged=is_ragged
            )

        if include_id:
            output_schema[entity_id] = ColumnSchema(entity_id, dtype=np.int32)
        return QueryFeast(
            str(store.repo_path),
            entity_id,
            view,
            column,
            features,
            mh_features,
            input_schema,
            output_schema,
            include_id=include_id,
            output_prefix=output_prefix or "",
        )

    def __init__(
        self,
        repo_path: str,
        entity_id: str,
        entity_view: str,
        entity_column: str,
        features: List[str],
        mh_features: List[str],
        input_schema: Schema,
        output_schema: Schema,
        include_id: bool = False,
        output_prefix: str = "",
        suffix_int: int = 1,
    ):
        self.repo_path = repo_path
        self.entity_id = entity_id
        self.entity_view = entity_view
        self.entity_column = entity_column
        self.features = features
        self.mh_features = mh_features
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.include_id = include_id
        self.output_prefix = output_prefix
        self.suffix_int = suffix_int
        self.store = FeatureStore(repo_path=repo_path)
        super().__init__()

    def compute_output_schema(
        self, input_schema: Schema, col_selector: ColumnSelector, prev_output_schema: Schema = None
    ) -> Schema:
        return self.output_schema

    def compute_input_schema(
        self,
        root_schema: Schema,
        parents_schema: Schema,
        deps_schema: Schema,
        selector: ColumnSelector,
    ) -> Schema:
        return self.input_schema

    def transform(self, col_selector: ColumnSelector, transformable: TensorTable) -> TensorTable:
        entity_ids = transformable[self.entity_column]
        # online lookups always happen on the host; the feature store returns python lists
        entity_ids = np.asarray(entity_ids.values.to("cpu") if hasattr(entity_ids.values, "to") else entity_ids.values)

        if len(entity_ids) < 1:
            raise ValueError(
                "No entity ids provided when querying Feast. Must provide "
                "at least one id in order to fetch features."
            )
        entity_rows = [{self.entity_id: int(entity_id)} for entity_id in entity_ids]

        feature_names = self.features + self.mh_features
        feature_refs = [
            ":".join([self.entity_view, feature_name]) for feature_name in feature_names
        ]

        feast_response = self.store.get_online_features(
            features=feature_refs,
            entity_rows=entity_rows,
        ).to_dict()

        output_tensors = {}
        if self.include_id:
            output_tensors[self.entity_id] = entity_ids

        # Numerical and single-hot categorical
        for feature_name in self.features:
            prefixed_name = self._prefixed_name(self.output_prefix, feature_name)
            feature_value = feast_response[feature_name]
            feature_array = np.array([feature_value]).T.astype(
                self.output_schema[prefixed_name].dtype.to_numpy
            )
            output_tensors[prefixed_name] = feature_array

        # Multi-hot categorical: ragged values + offsets
        for feature_name in self.mh_features:
            feature_value = feast_response[feature_name]
            prefixed_name = self._prefixed_name(self.output_prefix, feature_name)
            feature_out_name = f"{prefixed_name}__values"
            nnzs = None
            if isinstance(feature_value[0], list) and self.output_schema[prefixed_name].is_ragged:
                flattened_value = []
                for val in feature_value:
                    flattened_value.extend(val)
                nnzs = [len(vals) for vals in feature_value]
                feature_value = [flattened_value]

            feature_array = np.array(feature_value).T.astype(
                self.output_schema[prefixed_name].dtype.to_numpy
            )
            output_tensors[feature_out_name] = feature_array
            if nnzs is not None:
                output_tensors[f"{prefixed_name}__offsets"] = np.concatenate(
                    [[0], np.cumsum(nnzs)]
                ).astype(np.int32)

        return type(transformable)(output_tensors)

    @classmethod
    def _prefixed_name(cls, output_prefix, col_name):
        if output_prefix and col_name and not col_name.startswith(output_prefix):
            return f"{output_prefix}_{col_name}"
        else:
            return col_name
