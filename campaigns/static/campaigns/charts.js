/*
 * Interactive metric charts for the run page and the compare page (uPlot, vendored under
 * vendor/uplot/). Each chart is an element with class "metric-chart" whose data-chart names a
 * <script type="application/json"> block written by campaigns/charts/interactive.py:
 *   {title, x: [steps], series: [{label, colour, dashed, values: [number|null]}],
 *    stop_step, threshold, non_finite: [{label, step, token}]}
 * The chart shows the values under the cursor in its legend, a grid, a log-scale toggle,
 * exponential smoothing (the debiased EMA TensorBoard and W&B use), drag to zoom and
 * double-click to reset. Without JavaScript the page's <noscript> SVG stands in.
 */
(function () {
  "use strict";

  var STOP = "#6a3d9a";
  var THRESHOLD = "#ba2121";

  function fmt(v) {
    if (v == null || !isFinite(v)) return "—";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) return Number(v.toPrecision(4)).toExponential();
    return String(+v.toPrecision(5));
  }

  // Debiased exponential moving average: s_n = w s_{n-1} + (1 - w) v_n, shown as
  // s_n / (1 - w^n) so the first points are not pulled towards zero.
  function ema(values, weight) {
    if (!weight) return values.slice();
    var out = new Array(values.length);
    var last = 0;
    var n = 0;
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (v == null || !isFinite(v)) {
        out[i] = null;
        continue;
      }
      last = last * weight + (1 - weight) * v;
      n += 1;
      out[i] = last / (1 - Math.pow(weight, n));
    }
    return out;
  }

  function hasPositive(data) {
    return data.series.some(function (s) {
      return s.values.some(function (v) { return v != null && v > 0; });
    });
  }

  function overlays(data) {
    // The stop step, the stop rule's threshold and the non-finite points, drawn after uPlot.
    return function (u) {
      var ctx = u.ctx;
      var b = u.bbox;
      ctx.save();
      ctx.lineWidth = 1.5 * devicePixelRatio;
      if (data.threshold != null) {
        var y = u.valToPos(data.threshold, "y", true);
        if (y >= b.top && y <= b.top + b.height) {
          ctx.strokeStyle = THRESHOLD;
          ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
          ctx.beginPath();
          ctx.moveTo(b.left, y);
          ctx.lineTo(b.left + b.width, y);
          ctx.stroke();
          ctx.fillStyle = THRESHOLD;
          ctx.font = 11 * devicePixelRatio + "px sans-serif";
          ctx.textAlign = "right";
          ctx.fillText("stop rule " + fmt(data.threshold), b.left + b.width - 4, y - 6 * devicePixelRatio);
          ctx.textAlign = "left";
        }
      }
      if (data.stop_step != null) {
        var x = u.valToPos(data.stop_step, "x", true);
        if (x >= b.left && x <= b.left + b.width) {
          ctx.strokeStyle = STOP;
          ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
          ctx.beginPath();
          ctx.moveTo(x, b.top);
          ctx.lineTo(x, b.top + b.height);
          ctx.stroke();
          ctx.fillStyle = STOP;
          ctx.font = 11 * devicePixelRatio + "px sans-serif";
          ctx.fillText("stop", x + 3, b.top + 12 * devicePixelRatio);
        }
      }
      ctx.setLineDash([]);
      ctx.fillStyle = THRESHOLD;
      data.non_finite.forEach(function (p) {
        var px = u.valToPos(p.step, "x", true);
        if (px >= b.left && px <= b.left + b.width) {
          ctx.fillRect(px - 2 * devicePixelRatio, b.top, 4 * devicePixelRatio, 8 * devicePixelRatio);
        }
      });
      ctx.restore();
    };
  }

  function widthOf(root) {
    // The admin's read-only field shrinks to its content, so measure the room its fieldset
    // (or figure) leaves to the right of where the chart starts.
    var box = root.closest("fieldset, figure, .module") || root.parentNode;
    var w = root.clientWidth || 640;
    if (box) {
      var room = box.getBoundingClientRect().right - root.getBoundingClientRect().left - 16;
      if (room > w) w = room;
    }
    return Math.max(320, Math.min(Math.floor(w), 1100));
  }

  function options(data, state, width) {
    var series = [{ label: "step", value: function (u, v) { return v == null ? "—" : v; } }];
    data.series.forEach(function (s) {
      series.push({
        label: s.label,
        stroke: s.colour,
        width: 1.5,
        dash: s.dashed ? [6, 4] : undefined,
        spanGaps: data.series.length > 1,
        value: function (u, v) { return fmt(v); },
      });
    });
    var axis = { stroke: "#555", grid: { stroke: "#e6e6e6", width: 1 }, ticks: { stroke: "#ccc" } };
    return {
      title: data.title + (state.smooth ? " (smoothed " + state.smooth.toFixed(2) + ")" : ""),
      width: width,
      height: 260,
      series: series,
      scales: {
        x: { time: false },
        y: state.log ? { distr: 3, log: 10 } : { distr: 1 },
      },
      axes: [
        Object.assign({ label: "step" }, axis),
        Object.assign({ size: 70, values: function (u, splits) { return splits.map(fmt); } }, axis),
      ],
      cursor: { drag: { x: true, y: false }, points: { size: 6 } },
      legend: { live: true },
      hooks: { draw: [overlays(data)] },
    };
  }

  function controls(root, state, redraw, logAllowed) {
    var bar = document.createElement("div");
    bar.className = "chart-controls";
    bar.innerHTML =
      '<label><input type="checkbox" class="chart-log"> log scale</label> ' +
      '<label>smoothing <input type="range" class="chart-smooth" min="0" max="0.99" ' +
      'step="0.01" value="0"> <output class="chart-smooth-value">0</output></label> ' +
      '<span class="chart-help">drag to zoom · double-click to reset</span>';
    var log = bar.querySelector(".chart-log");
    if (!logAllowed) {
      log.disabled = true;
      log.parentNode.title = "no positive value to draw on a log scale";
    }
    log.addEventListener("change", function () {
      state.log = log.checked;
      redraw(true);
    });
    var smooth = bar.querySelector(".chart-smooth");
    var shown = bar.querySelector(".chart-smooth-value");
    smooth.addEventListener("input", function () {
      state.smooth = parseFloat(smooth.value) || 0;
      shown.textContent = state.smooth.toFixed(2);
      redraw(false);
    });
    root.appendChild(bar);
  }

  function build(root) {
    var source = document.getElementById(root.getAttribute("data-chart"));
    if (!source || typeof uPlot === "undefined") return;
    var data = JSON.parse(source.textContent);
    var state = { log: false, smooth: 0 };
    var holder = document.createElement("div");
    var plot = null;

    function columns() {
      var cols = [data.x];
      data.series.forEach(function (s) {
        var v = ema(s.values, state.smooth);
        if (state.log) v = v.map(function (y) { return y != null && y > 0 ? y : null; });
        cols.push(v);
      });
      return cols;
    }

    function redraw(rebuild) {
      if (plot && !rebuild) {
        plot.setData(columns());
        if (plot.root.querySelector(".u-title")) {
          plot.root.querySelector(".u-title").textContent = options(data, state, 0).title;
        }
        return;
      }
      if (plot) plot.destroy();
      plot = new uPlot(options(data, state, widthOf(root)), columns(), holder);
      root.uplot = plot;
    }

    root.style.width = widthOf(root) + "px";  // the controls' flex row needs a real width
    controls(root, state, redraw, hasPositive(data));
    root.appendChild(holder);
    redraw(true);
    window.addEventListener("resize", function () {
      root.style.width = "";
      var w = widthOf(root);
      root.style.width = w + "px";
      if (plot) plot.setSize({ width: w, height: 260 });
    });
  }

  function init() {
    var roots = document.querySelectorAll(".metric-chart[data-chart]");
    for (var i = 0; i < roots.length; i++) build(roots[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
