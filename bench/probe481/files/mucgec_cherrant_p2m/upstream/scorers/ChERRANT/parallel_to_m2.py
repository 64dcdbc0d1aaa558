import argparse
import os
import sys
from multiprocessing import Pool

from tqdm import tqdm

from modules.annotator import Annotator
from modules.tokenizer import Tokenizer

sys.path.append(os.path.dirname(os.path.abspath(__file__)))

annotator, sentence_to_tokenized = None, None


def annotate(line):
    """
    :param line:
    :return:
    """
    sent_list = line.split("\t")[1:]
    source = sent_list[0]
    if args.segmented:
        source = source.strip()
    else:
        source = "".join(source.strip().split())
    output_str = ""
    for idx, target in enumerate(sent_list[1:]):
        try:
            if args.segmented:
                target = target.strip()
            else:
                target = "".join(target.strip().split())
            if not args.no_simplified:
                target = to_simplified(target)
            source, target = sentence_to_tokenized[source], sentence_to_tokenized[target]
            out, cors = annotator(source, target, idx)
            if idx == 0:
                output_str += "".join(out[:-1])
            else:
                output_str += "".join(out[1:-1])
        except Exception:
            raise Exception
    return output_str


def to_simplified(text):
    try:
        from opencc import OpenCC
        return OpenCC("t2s").convert(text)
    except ImportError:
        return text


def main(args):
    tokenizer = Tokenizer(args.granularity, args.device, args.segmented, args.bpe)
    global annotator, sentence_to_tokenized
    annotator = Annotator.create_default(args.granularity, args.multi_cheapest_strategy)
    lines = open(args.file, "r", encoding="utf-8").read().strip().split("\n")
    sentence_to_tokenized = {}
    sentence_set = set()
    for line in lines:
        for sent in line.split("\t")[1:]:
            sentence_set.add("".join(sent.split()).strip() if not args.segmented else sent.strip())
    sentences = [s for s in sentence_set if s]
    for i in tqdm(range(0, len(sentences), args.batch_size)):
        batch = sentences[i:i + args.batch_size]
        for s, r in zip(batch, tokenizer(batch)):
            sentence_to_tokenized[s] = r

    with open(args.output, "w", encoding="utf-8") as f, Pool(args.worker_num) as pool:
        for ret in pool.imap(annotate, tqdm(lines), chunksize=8):
            if ret:
                f.write(ret)
                f.write("\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Choose input file to annotate")
    parser.add_argument("-f", "--file", type=str, required=True, help="Input parallel file")
    parser.add_argument("-o", "--output", type=str, help="Output file", required=True)
    parser.add_argument("-b", "--batch_size", type=int, help="The size of batch", default=128)
    parser.add_argument("-d", "--device", type=int, help="The ID of GPU", default=0)
    parser.add_argument("-w", "--worker_num", type=int, help="The number of workers", default=16)
    parser.add_argument("-g", "--granularity", type=str, help="Choose char-level or word-level evaluation", default="char")
    parser.add_argument("-m", "--merge", help="Whether merge continuous replacement/deletion/insertion", action="store_true")
    parser.add_argument("-s", "--multi_cheapest_strategy", type=str, choices=["first", "all"], default="all")
    parser.add_argument("--segmented", help="Whether tokens have been segmented", action="store_true")  # 支持提前token化，用空格隔开
    parser.add_argument("--no_simplified", help="Whether simplifying chinese", action="store_true")  # 将所有corrections转换为简体中文
    parser.add_argument("--bpe", help="Whether to use bpe", action="store_true")  # 支持 bpe 切分英文单词
    args = parser.parse_args()
    main(args)
