# author: Xiang Gao at Microsoft Research AI NLP Group

import torch, os, pdb
import numpy as np
from model import OptionInfer, Scorer, JointScorer
from feeder import Feeder


def get_model(path, cuda=True):
    opt = OptionInfer(cuda)
    if path.endswith('.yaml') or path.endswith('.yml'):
        model = JointScorer(opt)
        model.load(path)
    if path.endswith('pth'):
        model = Scorer(opt)
        model.load(path)
        if cuda:
            model.cuda()
    return model


def predict(model, cxt, hyps, max_cxt_turn=None):
    # split into smaller batch to avoid OOM
    n = len(hyps)
    i0 = 0
    scores = []
    while i0 < n:
        i1 = min(i0 + 32, n)
        _scores = model.predict(cxt, hyps[i0: i1], max_cxt_turn=max_cxt_turn)
        scores.append(_scores)
        i0 = i1
    if isinstance(_scores, dict):
        d_scores = dict()
        for k in _scores:
            d_scores[k] = np.concatenate([_scores[k] for _scores in scores])
        return d_scores
    else:
        return np.concatenate(scores)



def eval_fake(fld, model, fake, max_n=-1, max_cxt_turn=None):
    """
    for a given context, we rank k real and m fake responses
    if x real responses appeared in topk ranked responses, define acc = x/k, where k = # of real. 
    this can be seen as a generalized version of hits@k
    for a perfect ranking, x == k thus acc == 1. 
    """

    assert(os.path.isdir(fld))
    def read_data(path, max_n=-1):
        cxts = dict()
        rsps = dict()
        for i, line in enumerate(open(path, encoding='utf-8')):
            ss = line.strip('\n').split('\t')
            ss0 = ss[0].split(' _SEP_ ')
            if len(ss0) == 2:
                cxt, cxt_id = ss0
                cxt_id = cxt_id.strip()
            else:
                cxt = ss0[0]
                cxt_id = cxt.strip().replace(' ','')
            cxts[cxt_id] = cxt.strip()
            rsps[cxt_id] = [s.split(' _SEP_ ')[0] for s in ss[1:]]
            if i == max_n:
                break
        return cxts, rsps

    print('evaluating %s'%fld)
    acc = []
    cxts, reals = read_data(fld + '/ref.tsv')
    _, fakes = read_data(fld + '/%s.tsv'%fake)

    n = 0
    for cxt_id in reals:
        if cxt_id not in fakes:
            print('[WARNING] could not find fake examples for [%s]'%cxt_id)
            continue
        scores = predict(model, cxts[cxt_id], reals[cxt_id] + fakes[cxt_id], max_cxt_turn=max_cxt_turn)
        ix_score = sorted([(scores[i], i) for i in range(len(scores))], reverse=True)
        k = len(reals[cxt_id])
        _acc = np.mean([i < k for _, i in ix_score[:k]])
        acc.append(_acc)
        n += 1
        if n % 10 == 0:
            print('evaluated %i, avg acc %.3f'%(n, np.mean(acc)))
        if n == max_n:
            break

    print('final acc is %.3f based on %i samples'%(np.mean(acc), n))



def rank_hyps(path_in, path_out, model, max_cxt_turn=None):
    lines = []
    for i, line in enumerate(open(path_in, encoding='utf-8')):
        ss = line.strip('\n').split('\t')
        cxt = ss[0]
        hyps = ss[1:]
        d_scores = predict(model, cxt, hyps, max_cxt_turn=max_cxt_turn)
        if not isinstance(d_scores, dict):
            d_scores = {'score': d_scores}
        scores = d_scores['final'] if 'final' in d_scores else d_scores['score']
        ranked = sorted([(scores[j], hyps[j]) for j in range(len(hyps))], reverse=True)
        lines.append('\t'.join([cxt] + ['%.3f\t%s' % (s, h) for s, h in ranked]))
        if i % 100 == 0:
            print('processed %i lines' % i)
    with open(path_out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))
    print('saved to ' + path_out)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument('task', type=str)
    parser.add_argument('--data', type=str)
    parser.add_argument('--max_cxt_turn', type=int, default=2)
    parser.add_argument('--path_pth', '-p', type=str)
    parser.add_argument('--cpu', action='store_true')
    parser.add_argument('--max_n', type=int, default=5000)
    args = parser.parse_args()

    cuda = False if args.cpu else torch.cuda.is_available()
    model = get_model(args.path_pth, cuda)
    if args.task == 'eval_human_vs_rand':
        eval_fake(args.data, model, 'human_vs_rand', max_n=args.max_n, max_cxt_turn=args.max_cxt_turn)
    elif args.task == 'eval_human_vs_machine':
        eval_fake(args.data, model, 'human_vs_machine', max_n=args.max_n, max_cxt_turn=args.max_cxt_turn)
    elif args.task == 'test':
        rank_hyps(args.data, args.data + '.ranked.txt', model, max_cxt_turn=args.max_cxt_turn)
    elif args.task == 'play':
        from main import play
        play(model, max_cxt_turn=args.max_cxt_turn)
    else:
        raise ValueError
