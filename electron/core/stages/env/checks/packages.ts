import type { Msg } from '../../../../../shared/api/text';
import { numpyText, packageText } from '../../../knowledge/keys';
import { versionLess } from '../versions';
import { lines, m, verdict, type EnvCheck } from './text';

export const pythonPackages: EnvCheck = {
  id: 'env.python-packages',
  title: m('pythonPackages.title'),
  evaluate(f, k) {
    const found: {
      dist: string;
      version: string;
      status: 'warn' | 'fail';
      problem: Msg;
      fix: Msg;
    }[] = [];
    for (const p of k.packages.packages) {
      const version = f.dists[p.dist];
      if (version === undefined) continue;
      if (p.unlessDist && f.dists[p.unlessDist] !== undefined) continue;
      found.push({
        dist: p.dist,
        version,
        status: p.status,
        problem: packageText(p.dist, 'message'),
        fix: packageText(p.dist, 'fix'),
      });
    }
    const numpy = f.dists.numpy;
    const cann = f.inventory.versions.cann;
    if (
      numpy &&
      Number.parseInt(numpy, 10) > k.packages.numpy.maxMajor &&
      cann &&
      versionLess(cann.replace(/\.RC\d+$/i, ''), k.packages.numpy.cannBefore)
    ) {
      found.push({
        dist: 'numpy',
        version: numpy,
        status: 'warn',
        problem: numpyText('message', { version: numpy }),
        fix: numpyText('fix'),
      });
    }
    const evidence = {
      checked: Object.keys(f.dists).length,
      found: found.map((x) => `${x.dist} ${x.version}`),
    };
    if (!found.length)
      return verdict(
        'pass',
        m('pythonPackages.none', { count: Object.keys(f.dists).length }),
        evidence,
      );
    const status = found.some((x) => x.status === 'fail') ? 'fail' : 'warn';
    return verdict(
      status,
      m('sentences', {
        sentences: found.map((x) =>
          m('pythonPackages.found', { dist: x.dist, version: x.version, problem: x.problem }),
        ),
      }),
      evidence,
      lines(found.map((x) => m('pythonPackages.fix', { dist: x.dist, fix: x.fix }))),
    );
  },
};
