"""Local RAG with LlamaIndex: Llama-2-chat (8-bit) + bge-small embeddings + persistent Chroma.

    python query_engine.py --data ./data --persist ./storage "What does the contract say about renewal?"
"""
import argparse
import logging
import sys
import time

import chromadb
import torch
from llama_index.core import (
    PromptTemplate,
    Settings,
    SimpleDirectoryReader,
    StorageContext,
    VectorStoreIndex,
)
from llama_index.core.node_parser import SentenceSplitter
from llama_index.embeddings.huggingface import HuggingFaceEmbedding
from llama_index.llms.huggingface import HuggingFaceLLM
from llama_index.vector_stores.chroma import ChromaVectorStore
from transformers import StoppingCriteria, StoppingCriteriaList

logging.basicConfig(stream=sys.stdout, level=logging.INFO)
logger = logging.getLogger("query_engine")

SYSTEM_PROMPT = """You are an AI assistant that answers questions in a friendly manner, based on the given source documents.
Here are some rules you always follow:
- Generate human readable output, avoid creating output with gibberish text.
- Generate only the requested output, don't include any other language before or after the requested output.
- Never say thank you, that you are happy to help, that you are an AI agent, etc. Just answer directly.
- Generate professional language typically used in business documents in North America.
- Never generate offensive or foul language.
"""

query_wrapper_prompt = PromptTemplate("[INST]<<SYS>>\n" + SYSTEM_PROMPT + "<</SYS>>\n\n{query_str}[/INST] ")


class StopOnTokens(StoppingCriteria):
    """Stop generation as soon as any of the given token-id sequences is produced."""

    def __init__(self, stop_token_ids):
        super().__init__()
        self.stop_token_ids = [torch.tensor(ids).cuda() for ids in stop_token_ids]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> bool:
        for stop_ids in self.stop_token_ids:
            if input_ids.shape[1] >= len(stop_ids) and torch.equal(input_ids[0, -len(stop_ids):], stop_ids):
                return True
        return False


def build_llm(model_name: str, context_window: int, max_new_tokens: int, load_8bit: bool):
    model_kwargs = {"torch_dtype": torch.float16}
    if load_8bit:
        # 7B in int8 fits comfortably on a 12 GB card together with the embedder
        model_kwargs["load_in_8bit"] = True

    llm = HuggingFaceLLM(
        context_window=context_window,
        max_new_tokens=max_new_tokens,
        generate_kwargs={"temperature": 0.1, "do_sample": True, "top_p": 0.9},
        system_prompt=SYSTEM_PROMPT,
        query_wrapper_prompt=query_wrapper_prompt,
        tokenizer_name=model_name,
        model_name=model_name,
        device_map="auto",
        tokenizer_kwargs={"max_length": context_window},
        model_kwargs=model_kwargs,
    )
    # "</s>" plus the "[INST" the chat model sometimes starts hallucinating
    stop_ids = [[2], llm._tokenizer("[INST", add_special_tokens=False).input_ids]
    llm._stopping_criteria = StoppingCriteriaList([StopOnTokens(stop_ids)])
    return llm


def build_index(data_dir: str, persist_dir: str, collection: str, rebuild: bool):
    client = chromadb.PersistentClient(path=persist_dir)
    if rebuild:
        try:
            client.delete_collection(collection)
        except ValueError:
            pass
    chroma_collection = client.get_or_create_collection(collection)
    vector_store = ChromaVectorStore(chroma_collection=chroma_collection)
    storage_context = StorageContext.from_defaults(vector_store=vector_store)

    if chroma_collection.count() == 0:
        logger.info("Indexing documents from %s", data_dir)
        documents = SimpleDirectoryReader(data_dir, recursive=True).load_data()
        t0 = time.time()
        index = VectorStoreIndex.from_documents(documents, storage_context=storage_context, show_progress=True)
        logger.info("Indexed %d documents in %.1fs", len(documents), time.time() - t0)
    else:
        logger.info("Re-using %d vectors already in collection %s", chroma_collection.count(), collection)
        index = VectorStoreIndex.from_vector_store(vector_store, storage_context=storage_context)
    return index


def evaluate_retrieval(index, qa_path: str, top_k: int):
    """Hit-rate / MRR of the retriever on a JSONL file of {"question", "source"} pairs.

    ``source`` is the file name the answer should come from; it is compared with the
    ``file_name`` metadata SimpleDirectoryReader attaches to every node.
    """
    import json

    retriever = index.as_retriever(similarity_top_k=top_k)
    hits, rr, n = 0, 0.0, 0
    misses = []
    with open(qa_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            nodes = retriever.retrieve(row["question"])
            names = [nd.metadata.get("file_name") for nd in nodes]
            n += 1
            if row["source"] in names:
                hits += 1
                rr += 1.0 / (names.index(row["source"]) + 1)
            else:
                misses.append((row["question"], row["source"], names[:3]))
    if n == 0:
        print("no evaluation rows found")
        return
    print(f"retrieval eval on {n} questions: hit@{top_k}={hits / n:.3f}  MRR={rr / n:.3f}")
    for q, src, got in misses[:10]:
        print(f"  MISS {src!r}: {q[:80]!r} -> {got}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("question", nargs="*")
    parser.add_argument("--data", default="./data")
    parser.add_argument("--persist", default="./storage")
    parser.add_argument("--collection", default="docs")
    parser.add_argument("--model", default="meta-llama/Llama-2-7b-chat-hf")
    parser.add_argument("--embed-model", default="BAAI/bge-small-en-v1.5")
    parser.add_argument("--context-window", type=int, default=4096)
    parser.add_argument("--max-new-tokens", type=int, default=384)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--no-8bit", action="store_true", help="load the LLM in fp16 instead of int8")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--eval", default=None, help="JSONL with question/source pairs; run retrieval eval and exit")
    args = parser.parse_args()

    Settings.embed_model = HuggingFaceEmbedding(model_name=args.embed_model, device="cuda", embed_batch_size=32)
    Settings.llm = build_llm(args.model, args.context_window, args.max_new_tokens, load_8bit=not args.no_8bit)
    Settings.node_parser = SentenceSplitter(chunk_size=512, chunk_overlap=64)
    Settings.context_window = args.context_window
    Settings.num_output = args.max_new_tokens

    index = build_index(args.data, args.persist, args.collection, args.rebuild)
    if args.eval:
        evaluate_retrieval(index, args.eval, args.top_k)
        return
    query_engine = index.as_query_engine(similarity_top_k=args.top_k, streaming=True)

    questions = [" ".join(args.question)] if args.question else []
    if not questions:
        print("Interactive mode, empty line to quit.")
    while True:
        q = questions.pop(0) if questions else input("\n> ").strip()
        if not q:
            break
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        response = query_engine.query(q)
        response.print_response_stream()
        print()
        for node in response.source_nodes:
            print(f"  [{node.score:.3f}] {node.metadata.get('file_name', '?')}")
        print(
            f"({time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)"
        )
        if args.question:
            break


if __name__ == "__main__":
    main()
