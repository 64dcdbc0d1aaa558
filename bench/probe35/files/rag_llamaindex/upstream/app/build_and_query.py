"""
Build a LlamaIndex vector index over a folder of documents and answer questions with a
local HF model.

    python app/build_and_query.py --docs ./data/handbook --persist ./storage
    python app/build_and_query.py --persist ./storage --question "What is the leave policy?"
"""
import argparse
import logging
import os
import sys
import time

import faiss
import torch
from llama_index.core import (
    Settings,
    SimpleDirectoryReader,
    StorageContext,
    VectorStoreIndex,
    load_index_from_storage,
)
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.prompts import PromptTemplate
from llama_index.embeddings.huggingface import HuggingFaceEmbedding
from llama_index.llms.huggingface import HuggingFaceLLM
from llama_index.vector_stores.faiss import FaissVectorStore
from transformers import BitsAndBytesConfig

logging.basicConfig(stream=sys.stdout, level=logging.INFO)
log = logging.getLogger("rag")

QA_TEMPLATE = PromptTemplate(
    "<|system|>\nYou answer questions using only the context below. If the answer is not in the "
    "context, say you don't know.\n\n{context_str}</s>\n<|user|>\n{query_str}</s>\n<|assistant|>\n"
)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default=None)
    ap.add_argument("--persist", default="./storage")
    ap.add_argument("--question", default=None)
    ap.add_argument("--llm", default="HuggingFaceH4/zephyr-7b-beta")
    ap.add_argument("--embed-model", default="BAAI/bge-small-en-v1.5")
    ap.add_argument("--embed-dim", type=int, default=384)
    ap.add_argument("--chunk-size", type=int, default=512)
    ap.add_argument("--top-k", type=int, default=4)
    ap.add_argument("--four-bit", action="store_true", help="force 4-bit loading even on large GPUs")
    return ap.parse_args()


def pick_quantization(force_4bit: bool):
    """Load in 4-bit when the GPU has less than 40 GB, otherwise in bf16."""
    total_gb = torch.cuda.get_device_properties(0).total_memory / 1024**3
    log.info("GPU 0: %s, %.0f GB", torch.cuda.get_device_name(0), total_gb)
    if force_4bit or total_gb < 40:
        return BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
    return None


def configure_models(args):
    Settings.embed_model = HuggingFaceEmbedding(
        model_name=args.embed_model,
        device="cuda",
        embed_batch_size=64,
        normalize=True,
    )

    quant = pick_quantization(args.four_bit)
    model_kwargs = {"torch_dtype": torch.bfloat16}
    if quant is not None:
        model_kwargs["quantization_config"] = quant

    Settings.llm = HuggingFaceLLM(
        model_name=args.llm,
        tokenizer_name=args.llm,
        context_window=3900,
        max_new_tokens=256,
        generate_kwargs={"temperature": 0.2, "do_sample": True, "top_p": 0.95},
        model_kwargs=model_kwargs,
        device_map="auto",
    )
    Settings.node_parser = SentenceSplitter(chunk_size=args.chunk_size, chunk_overlap=64)


def build_index(args):
    documents = SimpleDirectoryReader(args.docs, recursive=True).load_data()
    log.info("loaded %d documents", len(documents))

    faiss_index = faiss.IndexFlatIP(args.embed_dim)
    vector_store = FaissVectorStore(faiss_index=faiss_index)
    storage_context = StorageContext.from_defaults(vector_store=vector_store)

    t0 = time.time()
    index = VectorStoreIndex.from_documents(documents, storage_context=storage_context, show_progress=True)
    log.info("indexed in %.1fs", time.time() - t0)
    index.storage_context.persist(persist_dir=args.persist)
    return index


def load_index(args):
    vector_store = FaissVectorStore.from_persist_dir(args.persist)
    storage_context = StorageContext.from_defaults(vector_store=vector_store, persist_dir=args.persist)
    return load_index_from_storage(storage_context=storage_context)


def main():
    args = parse_args()
    configure_models(args)

    if args.docs:
        index = build_index(args)
    else:
        index = load_index(args)

    query_engine = index.as_query_engine(similarity_top_k=args.top_k, text_qa_template=QA_TEMPLATE)

    questions = [args.question] if args.question else [line.strip() for line in sys.stdin if line.strip()]
    for q in questions:
        t0 = time.time()
        response = query_engine.query(q)
        torch.cuda.synchronize()
        print(f"\nQ: {q}\nA: {response}\n({time.time() - t0:.1f}s)")
        for node in response.source_nodes:
            print(f"  - {node.metadata.get('file_name', '?')} score={node.score:.3f}")


if __name__ == "__main__":
    main()
