"""Chat with your documents -- Streamlit front-end.

Everything runs locally: the PDFs are chunked, embedded with a sentence-transformers model,
indexed with FAISS and answered by a HuggingFace causal LM served through LangChain's
HuggingFacePipeline. Tested on a single RTX 3090 / 4090 (24 GB).

    streamlit run app.py -- --model mistralai/Mistral-7B-Instruct-v0.2
"""
import argparse
import gc
import os
import tempfile
import time

import streamlit as st
import torch
from langchain.chains import ConversationalRetrievalChain
from langchain.document_loaders import PyPDFLoader, TextLoader
from langchain.embeddings import HuggingFaceEmbeddings
from langchain.llms import HuggingFacePipeline
from langchain.memory import ConversationBufferWindowMemory
from langchain.prompts import PromptTemplate
from langchain.text_splitter import RecursiveCharacterTextSplitter
from langchain.vectorstores import FAISS

DEFAULT_MODEL = "mistralai/Mistral-7B-Instruct-v0.2"
DEFAULT_EMBEDDER = "BAAI/bge-base-en-v1.5"
INDEX_DIR = os.environ.get("RAG_INDEX_DIR", "faiss_index")
GB = 1024 ** 3

QA_TEMPLATE = """[INST] You are a helpful assistant. Use only the context below to answer.
If the answer is not in the context, say you don't know.

Context:
{context}

Question: {question} [/INST]
"""


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--max-new-tokens", type=int, default=512)
    parser.add_argument("--chunk-size", type=int, default=800)
    parser.add_argument("--chunk-overlap", type=int, default=80)
    parser.add_argument("--top-k", type=int, default=4)
    # streamlit swallows unknown args before "--", so be lenient
    args, _ = parser.parse_known_args()
    return args


ARGS = parse_args()


# --------------------------------------------------------------------------------------
# GPU status
# --------------------------------------------------------------------------------------
def gpu_status_markdown() -> str:
    """Small markdown blob for the sidebar so users can see whether the model fits."""
    name = torch.cuda.get_device_name(0)
    total = torch.cuda.get_device_properties(0).total_memory / GB
    allocated = torch.cuda.memory_allocated(0) / GB
    reserved = torch.cuda.memory_reserved(0) / GB
    peak = torch.cuda.max_memory_allocated(0) / GB
    return (
        f"**GPU:** {name}  \n"
        f"**VRAM:** {allocated:.1f} GB allocated / {reserved:.1f} GB reserved / {total:.1f} GB total  \n"
        f"**Peak:** {peak:.1f} GB"
    )


def free_gpu_memory():
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


# --------------------------------------------------------------------------------------
# Models (cached across reruns)
# --------------------------------------------------------------------------------------
@st.cache_resource(show_spinner="Loading embedding model ...")
def load_embeddings(model_name: str):
    return HuggingFaceEmbeddings(
        model_name=model_name,
        model_kwargs={"device": "cuda"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )


@st.cache_resource(show_spinner="Loading LLM (first time downloads the weights) ...")
def load_llm(model_id: str, max_new_tokens: int):
    return HuggingFacePipeline.from_model_id(
        model_id=model_id,
        task="text-generation",
        device=0,
        model_kwargs={"torch_dtype": torch.float16, "low_cpu_mem_usage": True},
        pipeline_kwargs={
            "max_new_tokens": max_new_tokens,
            "do_sample": True,
            "temperature": 0.1,
            "repetition_penalty": 1.1,
            "return_full_text": False,
        },
    )


# --------------------------------------------------------------------------------------
# Indexing
# --------------------------------------------------------------------------------------
def load_uploaded_files(uploaded_files):
    docs = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for uf in uploaded_files:
            path = os.path.join(tmpdir, uf.name)
            with open(path, "wb") as f:
                f.write(uf.getvalue())
            if uf.name.lower().endswith(".pdf"):
                loader = PyPDFLoader(path)
            else:
                loader = TextLoader(path, encoding="utf-8")
            docs.extend(loader.load())
    return docs


def build_index(docs, embeddings):
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=ARGS.chunk_size, chunk_overlap=ARGS.chunk_overlap
    )
    chunks = splitter.split_documents(docs)
    t0 = time.time()
    db = FAISS.from_documents(chunks, embeddings)
    db.save_local(INDEX_DIR)
    return db, len(chunks), time.time() - t0


def load_index(embeddings):
    if not os.path.isdir(INDEX_DIR):
        return None
    return FAISS.load_local(INDEX_DIR, embeddings)


def make_chain(llm, db):
    prompt = PromptTemplate(template=QA_TEMPLATE, input_variables=["context", "question"])
    memory = ConversationBufferWindowMemory(
        k=3, memory_key="chat_history", return_messages=True, output_key="answer"
    )
    return ConversationalRetrievalChain.from_llm(
        llm=llm,
        retriever=db.as_retriever(search_kwargs={"k": ARGS.top_k}),
        memory=memory,
        return_source_documents=True,
        combine_docs_chain_kwargs={"prompt": prompt},
    )


# --------------------------------------------------------------------------------------
# UI
# --------------------------------------------------------------------------------------
st.set_page_config(page_title="Chat with your docs", page_icon=":books:", layout="wide")
st.title("Chat with your documents (100% local)")

with st.sidebar:
    st.header("Documents")
    uploaded = st.file_uploader("Upload PDF / TXT", type=["pdf", "txt", "md"], accept_multiple_files=True)
    rebuild = st.button("Build index")
    st.divider()
    st.header("Hardware")
    st.markdown(gpu_status_markdown())
    if st.button("Free GPU memory"):
        free_gpu_memory()
        st.rerun()
    st.caption(f"torch {torch.__version__} / CUDA {torch.version.cuda}")
    st.divider()
    st.header("Conversation")
    col1, col2 = st.columns(2)
    with col1:
        if st.button("Clear chat"):
            st.session_state.pop("chain", None)
            st.session_state.messages = []
            st.rerun()
    with col2:
        transcript = "\n\n".join(
            f"**{m['role']}**: {m['content']}" for m in st.session_state.get("messages", [])
        )
        st.download_button("Export", transcript or "(empty)", file_name="chat.md", mime="text/markdown")
    if os.path.isdir(INDEX_DIR):
        size_mb = sum(
            os.path.getsize(os.path.join(INDEX_DIR, f)) for f in os.listdir(INDEX_DIR)
        ) / 2**20
        st.caption(f"index: `{INDEX_DIR}` ({size_mb:.1f} MB)")
        if st.button("Delete index"):
            import shutil

            shutil.rmtree(INDEX_DIR, ignore_errors=True)
            st.session_state.pop("chain", None)
            st.rerun()

embeddings = load_embeddings(ARGS.embedder)

if rebuild and uploaded:
    with st.spinner("Embedding documents on the GPU ..."):
        docs = load_uploaded_files(uploaded)
        db, n_chunks, secs = build_index(docs, embeddings)
    st.success(f"Indexed {n_chunks} chunks in {secs:.1f}s")
    st.session_state.pop("chain", None)

db = load_index(embeddings)
if db is None:
    st.info("Upload some documents and click **Build index** to start.")
    st.stop()

if "chain" not in st.session_state:
    llm = load_llm(ARGS.model, ARGS.max_new_tokens)
    st.session_state.chain = make_chain(llm, db)
    st.session_state.messages = []

for msg in st.session_state.messages:
    with st.chat_message(msg["role"]):
        st.markdown(msg["content"])

if question := st.chat_input("Ask something about your documents"):
    st.session_state.messages.append({"role": "user", "content": question})
    with st.chat_message("user"):
        st.markdown(question)

    with st.chat_message("assistant"):
        t0 = time.time()
        with st.spinner("Thinking ..."):
            result = st.session_state.chain({"question": question})
        answer = result["answer"].strip()
        st.markdown(answer)
        elapsed = time.time() - t0
        st.caption(f"{elapsed:.1f}s, peak VRAM {torch.cuda.max_memory_allocated() / GB:.1f} GB")
        with st.expander("Sources"):
            for doc in result["source_documents"]:
                src = os.path.basename(doc.metadata.get("source", "?"))
                page = doc.metadata.get("page")
                st.markdown(f"- **{src}**" + (f" p.{page + 1}" if page is not None else ""))
                st.text(doc.page_content[:400])
    st.session_state.messages.append({"role": "assistant", "content": answer})
