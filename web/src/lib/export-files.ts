/**
 * Browser-side export helpers: download text/blobs, copy to the clipboard, turn a flamegraph or chart SVG
 * into a standalone SVG (labels as SVG <text>, styles inlined) and into a PNG.
 */

export function downloadBlob(filename: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function downloadText(filename: string, text: string, mime = 'text/plain'): void {
  downloadBlob(filename, new Blob([text], { type: `${mime};charset=utf-8` }));
}

/** Copy text; falls back to a hidden textarea where the async clipboard API is unavailable. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    /* fall through */
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  document.execCommand('copy');
  ta.remove();
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * A standalone copy of a d3-flame-graph SVG: its HTML labels (foreignObject) become SVG <text> elements
 * set through textContent, so the file opens anywhere and rasterises without tainting a canvas.
 */
export function standaloneFlameSvg(svg: SVGSVGElement, dark: boolean): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute('xmlns', SVG_NS);
  const bg = document.createElementNS(SVG_NS, 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', dark ? '#16181d' : '#ffffff');
  clone.insertBefore(bg, clone.firstChild);
  for (const fo of Array.from(clone.querySelectorAll('foreignObject'))) {
    const div = fo.firstElementChild as HTMLElement | null;
    const width = Number(fo.getAttribute('width') ?? 0);
    const label = div && div.style.display !== 'none' && width >= 35 ? (div.textContent ?? '') : '';
    if (label) {
      const text = document.createElementNS(SVG_NS, 'text');
      text.setAttribute('x', '4');
      text.setAttribute('y', '13');
      text.setAttribute('font-size', '11');
      text.setAttribute('font-family', 'Verdana, sans-serif');
      text.setAttribute('fill', '#000');
      const maxChars = Math.max(0, Math.floor((width - 8) / 6.5));
      text.textContent = label.length > maxChars ? `${label.slice(0, Math.max(0, maxChars - 1))}…` : label;
      fo.replaceWith(text);
    } else {
      fo.remove();
    }
  }
  for (const rect of Array.from(clone.querySelectorAll('g rect'))) {
    rect.setAttribute('stroke', dark ? '#16181d' : '#eeeeee');
    rect.setAttribute('fill-opacity', '0.85');
  }
  return new XMLSerializer().serializeToString(clone);
}

/** Rasterise an SVG string into a PNG blob (2× for sharpness). */
export async function svgToPng(svgText: string, width: number, height: number): Promise<Blob> {
  const img = new Image();
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml;charset=utf-8' }));
  try {
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error('could not render the SVG'));
      img.src = url;
    });
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width * scale));
    canvas.height = Math.max(1, Math.round(height * scale));
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** A file-name-safe slug for downloads. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'stagediff'
  );
}
