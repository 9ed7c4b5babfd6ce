// gw console: the little the pages need a script for, loaded from gw itself (the
// Content-Security-Policy allows no inline script): confirming a revoke, copying a new key, the
// uPlot charts, and the playground. Every page works to read without it.

(() => {
  // --- confirm before a destructive form is sent ---------------------------------------------
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  // --- copy a value shown once -----------------------------------------------------------------
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = "Copied";
      } catch {
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: copy it";
      }
    });
  }

  // --- charts (uPlot) ---------------------------------------------------------------------------
  const numbers = new Intl.NumberFormat("en-US");
  const chartColors = () => {
    const style = getComputedStyle(document.documentElement);
    const read = (name) => style.getPropertyValue(name).trim();
    return { text: read("--muted"), grid: read("--line"), bar: read("--accent"), fill: read("--accent-soft") };
  };

  for (const element of document.querySelectorAll("[data-chart]")) {
    const source = document.getElementById(element.dataset.chart);
    if (!source || typeof window.uPlot !== "function") continue;
    const data = JSON.parse(source.textContent);
    const xs = data.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const colors = chartColors();
    const axis = { stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid, width: 1 } };
    const options = {
      width: Math.max(element.clientWidth, 200),
      height: 220,
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // Half a day either side, so the first and last days' bars are whole.
      scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 70, values: (_u, values) => values.map((value) => numbers.format(value)) }],
      series: [
        {},
        {
          label: "credits",
          stroke: colors.bar,
          fill: colors.fill,
          width: 1,
          paths: window.uPlot.paths.bars({ size: [0.7, 40] }),
          points: { show: false },
          value: (_u, value) => (value == null ? "–" : numbers.format(value)),
        },
      ],
    };
    const chart = new window.uPlot(options, [xs, data.credits], element);
    new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 200), height: 220 })).observe(element);
  }

  // --- playground ---------------------------------------------------------------------------------
  const playground = document.getElementById("playground");
  if (!playground) return;
  const $ = (id) => document.getElementById(id);
  const keyInput = $("pg-key");
  const transcript = $("pg-transcript");
  const status = $("pg-status");
  /** The conversation so far: kept in this page only. */
  let messages = [];
  let controller = null;

  const apiKey = () => keyInput.value.trim();
  $("pg-forget").addEventListener("click", () => {
    keyInput.value = "";
    keyInput.focus();
  });

  const bubble = (role, text) => {
    const element = document.createElement("div");
    element.className = `bubble ${role}`;
    element.dataset.role = role;
    element.textContent = text;
    transcript.append(element);
    element.scrollIntoView({ block: "nearest" });
    return element;
  };

  /** The error an API answer carries, in the gateway's envelope. */
  const errorText = async (response) => {
    const body = await response.json().catch(() => null);
    return `${response.status}: ${body?.error?.message ?? response.statusText}`;
  };

  const send = async () => {
    const key = apiKey();
    const text = $("pg-message").value.trim();
    if (!key) {
      status.textContent = "Paste an API key first.";
      return;
    }
    if (!text || controller) return;
    messages.push({ role: "user", content: text });
    bubble("user", text);
    $("pg-message").value = "";
    const answer = bubble("assistant", "");
    answer.classList.add("streaming");
    controller = new AbortController();
    $("pg-send").disabled = true;
    $("pg-stop").disabled = false;
    status.textContent = "Waiting for the first words…";
    let written = "";
    try {
      const response = await fetch("/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: $("pg-model").value.trim(), messages, stream: true, stream_options: { include_usage: true } }),
        signal: controller.signal,
      });
      if (!response.ok) throw new Error(await errorText(response));
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let usage = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replaceAll("\r\n", "\n");
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const data = frame
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (!data || data === "[DONE]") continue;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message ?? "the stream broke");
          const delta = chunk.choices?.[0]?.delta?.content;
          if (delta) {
            written += delta;
            answer.textContent = written;
            status.textContent = "Streaming…";
          }
          if (chunk.usage) usage = chunk.usage;
        }
      }
      messages.push({ role: "assistant", content: written });
      status.textContent = usage ? `Done: ${usage.prompt_tokens} prompt and ${usage.completion_tokens} completion tokens.` : "Done.";
    } catch (error) {
      if (error.name === "AbortError") {
        if (written) messages.push({ role: "assistant", content: written });
        status.textContent = "Stopped.";
      } else {
        messages.pop();
        answer.classList.add("error");
        answer.textContent = written ? `${written}\n[${error.message}]` : error.message;
        status.textContent = "The call failed.";
      }
    } finally {
      answer.classList.remove("streaming");
      controller = null;
      $("pg-send").disabled = false;
      $("pg-stop").disabled = true;
    }
  };

  $("pg-send").addEventListener("click", send);
  $("pg-message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      send();
    }
  });
  $("pg-stop").addEventListener("click", () => controller?.abort());
  $("pg-clear").addEventListener("click", () => {
    controller?.abort();
    messages = [];
    transcript.replaceChildren();
    status.textContent = "";
  });

  const imageStatus = $("pg-image-status");
  $("pg-draw").addEventListener("click", async () => {
    const key = apiKey();
    const prompt = $("pg-image-prompt").value.trim();
    if (!key) {
      imageStatus.textContent = "Paste an API key first.";
      return;
    }
    if (!prompt) return;
    const request = { prompt, n: 1 };
    const model = $("pg-image-model").value.trim();
    const size = $("pg-image-size").value;
    if (model) request.model = model;
    if (size) request.size = size;
    $("pg-draw").disabled = true;
    imageStatus.textContent = "Drawing…";
    try {
      const response = await fetch("/v1/images/generations", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(request),
      });
      if (!response.ok) throw new Error(await errorText(response));
      const body = await response.json();
      const picture = body.data?.[0];
      if (!picture?.b64_json) throw new Error("the answer had no picture");
      const image = $("pg-image");
      image.src = `data:${picture.media_type ?? `image/${body.output_format ?? "png"}`};base64,${picture.b64_json}`;
      image.alt = prompt;
      image.hidden = false;
      const credits = response.headers.get("x-gw-credits");
      imageStatus.textContent = credits === null ? "Done." : `Done: ${numbers.format(Number(credits))} credits.`;
    } catch (error) {
      imageStatus.textContent = `The call failed: ${error.message}`;
    } finally {
      $("pg-draw").disabled = false;
    }
  });
})();
