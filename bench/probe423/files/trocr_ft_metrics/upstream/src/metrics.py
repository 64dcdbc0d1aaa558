"""Character / word error rate for handwriting recognition."""
import editdistance


def normalize(text):
    return " ".join(text.strip().split())


class CERMetric:
    """Accumulates edit distances over a whole split (micro-averaged, like the IAM papers)."""

    def __init__(self, lowercase=False):
        self.lowercase = lowercase
        self.reset()

    def reset(self):
        self.char_errors = 0
        self.char_total = 0
        self.word_errors = 0
        self.word_total = 0
        self.n = 0

    def update(self, predictions, references):
        for pred, ref in zip(predictions, references):
            pred, ref = normalize(pred), normalize(ref)
            if self.lowercase:
                pred, ref = pred.lower(), ref.lower()
            self.char_errors += editdistance.eval(pred, ref)
            self.char_total += max(len(ref), 1)
            pw, rw = pred.split(), ref.split()
            self.word_errors += editdistance.eval(pw, rw)
            self.word_total += max(len(rw), 1)
            self.n += 1

    def compute(self):
        return {
            "cer": self.char_errors / max(self.char_total, 1),
            "wer": self.word_errors / max(self.word_total, 1),
            "n": self.n,
        }


def compute_cer(pred_ids, label_ids, tokenizer):
    """`compute_metrics` hook for Seq2SeqTrainer."""
    pred_str = tokenizer.batch_decode(pred_ids, skip_special_tokens=True)
    label_ids[label_ids == -100] = tokenizer.pad_token_id
    label_str = tokenizer.batch_decode(label_ids, skip_special_tokens=True)
    metric = CERMetric()
    metric.update(pred_str, label_str)
    return metric.compute()
