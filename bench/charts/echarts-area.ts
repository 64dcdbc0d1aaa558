// ECharts, the same stacked bars as stepped stacked areas, LTTB-downsampled to the pixels.
import * as echarts from 'echarts/core';
import { LineChart } from 'echarts/charts';
import { GridComponent, DataZoomComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { COLOURS, PARTS, ZOOMS, breakdown, heap, nextFrame, type ChartPage } from './data';

echarts.use([LineChart, GridComponent, DataZoomComponent, CanvasRenderer]);

async function first(): Promise<number> {
  const { x, parts } = breakdown();
  const t0 = performance.now();
  const box = document.getElementById('chart')!;
  box.style.cssText = 'width:1200px;height:400px';
  const chart = echarts.init(box, undefined, { renderer: 'canvas' });
  // 'finished' after the render; a zoom that changes nothing may not render: 5 s at most
  const drawn = () =>
    Promise.race([
      new Promise<void>((r) => chart.on('finished', () => r())),
      new Promise<void>((r) => setTimeout(r, 5000)),
    ]);
  let done = drawn();
  chart.setOption({
    animation: false,
    grid: { left: 50, right: 10, top: 10, bottom: 30 },
    xAxis: { type: 'category', data: Array.from(x, String) },
    yAxis: { type: 'value' },
    dataZoom: [{ type: 'inside', xAxisIndex: 0, start: 0, end: 100 }],
    series: parts.map((p, k) => ({
      name: PARTS[k],
      type: 'line',
      showSymbol: false,
      step: 'end',
      stack: 'total',
      large: true,
      sampling: 'lttb', // downsampled to the pixels it has
      areaStyle: {},
      itemStyle: { color: COLOURS[k] },
      data: Array.from(p),
    })),
  });
  await done;
  await nextFrame();
  zoomAll = async () => {
    const redrawMs: number[] = [];
    for (const [a, b] of ZOOMS) {
      const t = performance.now();
      chart.off('finished');
      done = drawn();
      chart.dispatchAction({ type: 'dataZoom', start: a * 100, end: b * 100 });
      await done;
      await nextFrame();
      redrawMs.push(performance.now() - t);
    }
    return redrawMs;
  };
  return performance.now() - t0;
}
let zoomAll: () => Promise<number[]> = () => Promise.resolve([]);
(window as unknown as ChartPage).__chart = { first, zooms: () => zoomAll(), heap };
