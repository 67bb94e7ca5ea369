// The panel's only script: it forwards clicks to the extension, which holds the pack and decides
// what a click means. It reads nothing and renders nothing itself.
(function () {
  const vscode = acquireVsCodeApi();
  // The script runs after the body is parsed: the pack is on screen.
  vscode.postMessage({ type: "rendered" });
  document.addEventListener("click", (event) => {
    const target =
      event.target instanceof Element ? event.target.closest("[data-item], [data-action]") : null;
    if (!target) return;
    event.preventDefault();
    const item = target.getAttribute("data-item");
    if (item !== null) {
      vscode.postMessage({ type: "open", item });
      return;
    }
    vscode.postMessage({ type: target.getAttribute("data-action") });
  });
})();
