// decodeImageInput and encodeImage with real pixels: every picture here is made by sharp in the
// test, every hostile input (bombs, truncated files, documents posing as images) is crafted here.
import zlib from "node:zlib";
import test from "ava";
import sharp from "sharp";
import { encodeImage } from "../src/media/image-encode.js";
import { type DecodeImageOptions, decodeImageInput, InvalidImageError, probeImage } from "../src/media/image-input.js";
import { bytesFromBase64 } from "../src/media/image-source.js";
import { type FetchedResource, UrlNotAllowedError } from "../src/net/safe-fetch.js";

const limits: DecodeImageOptions = { maxBytes: 1_000_000, maxPixels: 4_000_000 };

const halfRed = { r: 255, g: 0, b: 0, alpha: 0.5 };
const pngWithAlpha = (): Promise<Buffer> =>
  sharp({ create: { width: 30, height: 20, channels: 4, background: halfRed } })
    .png()
    .toBuffer();
const jpeg = (): Promise<Buffer> =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: "#3366cc" } })
    .jpeg()
    .toBuffer();
const webpWithAlpha = (): Promise<Buffer> =>
  sharp({ create: { width: 16, height: 12, channels: 4, background: halfRed } })
    .webp()
    .toBuffer();
const gif = (): Promise<Buffer> =>
  sharp({ create: { width: 9, height: 7, channels: 3, background: "#00ff00" } })
    .gif()
    .toBuffer();

async function refused(
  t: import("ava").ExecutionContext,
  source: string | Buffer,
  reason: InvalidImageError["reason"],
  message: RegExp,
  options: DecodeImageOptions = limits,
): Promise<void> {
  const error = await t.throwsAsync(decodeImageInput(source, options), { instanceOf: InvalidImageError });
  t.is(error?.reason, reason);
  t.regex(error?.message ?? "", message);
}

/** A PNG whose IHDR claims other dimensions, with a correct CRC so only the size gives it away. */
function withPngDimensions(png: Buffer, width: number, height: number): Buffer {
  const patched = Buffer.from(png);
  patched.writeUInt32BE(width, 16);
  patched.writeUInt32BE(height, 20);
  patched.writeUInt32BE(zlib.crc32(patched.subarray(12, 29)) >>> 0, 29);
  return patched;
}

// ---- accepted inputs -----------------------------------------------------------------------------

test("a PNG with alpha, a JPEG, a WebP and a GIF are read with their real type and size", async (t) => {
  const png = await decodeImageInput(await pngWithAlpha(), limits);
  t.like(png, { mediaType: "image/png", width: 30, height: 20, hasAlpha: true, opaque: false, frames: 1 });
  const jpg = await decodeImageInput(await jpeg(), limits);
  t.like(jpg, { mediaType: "image/jpeg", width: 40, height: 30, hasAlpha: false, opaque: true, frames: 1 });
  const webp = await decodeImageInput(await webpWithAlpha(), limits);
  t.like(webp, { mediaType: "image/webp", width: 16, height: 12, hasAlpha: true, opaque: false });
  const gifInput = await decodeImageInput(await gif(), limits);
  t.like(gifInput, { mediaType: "image/gif", width: 9, height: 7 });
});

test("an opaque PNG with an alpha channel reports the channel and that it is opaque", async (t) => {
  const bytes = await sharp({ create: { width: 5, height: 5, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 1 } } })
    .png()
    .toBuffer();
  t.like(await decodeImageInput(bytes, limits), { hasAlpha: true, opaque: true });
});

test("an animated GIF reports one frame's size and its frame count", async (t) => {
  const frames = await Promise.all(
    ["#ff0000", "#00ff00", "#0000ff"].map((colour) =>
      sharp({ create: { width: 10, height: 8, channels: 3, background: colour } })
        .png()
        .toBuffer(),
    ),
  );
  const animated = await sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer();
  t.like(await decodeImageInput(animated, limits), { mediaType: "image/gif", width: 10, height: 8, frames: 3 });
});

test("dimensions follow the EXIF orientation", async (t) => {
  const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#abcdef" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();
  t.like(await decodeImageInput(rotated, limits), { width: 20, height: 40 });
});

test("a data: URL's declared type is ignored in favour of the bytes", async (t) => {
  const png = await pngWithAlpha();
  for (const declared of ["image/gif", "image/jpeg", "text/plain", "application/octet-stream", ""]) {
    const input = await decodeImageInput(`data:${declared};base64,${png.toString("base64")}`, limits);
    t.is(input.mediaType, "image/png", declared);
    t.deepEqual(input.bytes, png);
  }
  const jpg = await decodeImageInput(`DATA:image/png;charset=utf-8;BASE64,${(await jpeg()).toString("base64")}`, limits);
  t.is(jpg.mediaType, "image/jpeg");
});

test("a percent-encoded data: URL without base64 is decoded byte for byte", async (t) => {
  const png = await pngWithAlpha();
  const encoded = [...png].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  t.deepEqual((await decodeImageInput(`data:image/png,${encoded}`, limits)).bytes, png);
});

test("raw base64 is accepted with line breaks, without padding and in the URL-safe alphabet", async (t) => {
  const webp = await webpWithAlpha();
  const base64 = webp.toString("base64");
  const wrapped = base64.replace(/.{1,76}/g, (line) => `${line}\r\n`);
  t.is((await decodeImageInput(`  ${wrapped}  `, limits)).mediaType, "image/webp");
  t.is((await decodeImageInput(base64.replace(/=+$/, ""), limits)).mediaType, "image/webp");
  t.is((await decodeImageInput(webp.toString("base64url"), limits)).mediaType, "image/webp");
});

test("a Uint8Array view is read from its own window of the buffer", async (t) => {
  const png = await pngWithAlpha();
  const padded = new Uint8Array(png.length + 20);
  padded.set(png, 10);
  const input = await decodeImageInput(padded.subarray(10, 10 + png.length), limits);
  t.deepEqual(input.bytes, png);
});

test("http(s) URLs go through the fetch given, and the fetched Content-Type is not trusted", async (t) => {
  const jpg = await jpeg();
  const asked: string[] = [];
  const fetch = async (url: string): Promise<FetchedResource> => {
    asked.push(url);
    return { bytes: jpg, contentType: "image/png", finalUrl: url };
  };
  const input = await decodeImageInput(" https://images.example/cat.png ", { ...limits, fetch });
  t.is(input.mediaType, "image/jpeg");
  t.deepEqual(asked, ["https://images.example/cat.png"]);

  const refusing = async (): Promise<FetchedResource> => {
    throw new UrlNotAllowedError("private", "the URL's host resolves to a private address");
  };
  await t.throwsAsync(decodeImageInput("http://intranet.example/x.png", { ...limits, fetch: refusing }), {
    instanceOf: UrlNotAllowedError,
  });
});

test("without a fetch given, URLs go through safeFetch and internal ones are refused", async (t) => {
  const error = await t.throwsAsync(decodeImageInput("http://127.0.0.1:9/picture.png", limits), {
    instanceOf: UrlNotAllowedError,
  });
  t.is(error?.reason, "loopback");
});

test("probeImage checks bytes already in hand", async (t) => {
  t.like(await probeImage(await gif(), limits), { mediaType: "image/gif", width: 9, height: 7 });
});

// ---- refused inputs ------------------------------------------------------------------------------

test("a PNG whose header declares 30000x30000 is refused as too many pixels", async (t) => {
  const tiny = await sharp({ create: { width: 1, height: 1, channels: 3, background: "#000" } })
    .png()
    .toBuffer();
  const bomb = withPngDimensions(tiny, 30000, 30000);
  t.true(bomb.length < 200);
  await refused(t, bomb, "too_many_pixels", /^the image has more than the 4000000 pixels allowed$/);
  await refused(t, `data:image/png;base64,${bomb.toString("base64")}`, "too_many_pixels", /pixels allowed/);
});

test("a real large solid image that compresses small is refused by its pixel count", async (t) => {
  const solid = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#ffffff" } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  t.true(solid.length < 100_000, `${solid.length} bytes`);
  await refused(t, solid, "too_many_pixels", /pixels allowed/, { maxBytes: 1_000_000, maxPixels: 10_000_000 });
  t.like(await decodeImageInput(solid, { maxBytes: 1_000_000, maxPixels: 12_000_000 }), { width: 4000, height: 3000 });
});

test("a JPEG whose frame header declares huge dimensions is refused", async (t) => {
  const bytes = Buffer.from(await jpeg());
  const sof = bytes.indexOf(Buffer.from([0xff, 0xc0]));
  t.true(sof > 0);
  bytes.writeUInt16BE(60000, sof + 5); // height
  bytes.writeUInt16BE(60000, sof + 7); // width
  await refused(t, bytes, "too_many_pixels", /pixels allowed/);
});

test("truncated PNG, JPEG, WebP and GIF files are refused as corrupt", async (t) => {
  for (const make of [pngWithAlpha, jpeg, webpWithAlpha, gif]) {
    const whole = await make();
    await refused(t, whole.subarray(0, Math.floor(whole.length * 0.6)), "corrupt", /^the image data is corrupt or truncated$/);
  }
});

test("a PNG with damaged pixel data is refused as corrupt", async (t) => {
  const pixels = Buffer.alloc(64 * 64 * 3);
  for (let index = 0; index < pixels.length; index += 1) pixels[index] = (index * 7 + (index >> 5) * 13) % 251;
  const png = await sharp(pixels, { raw: { width: 64, height: 64, channels: 3 } })
    .png()
    .toBuffer();
  const idat = png.indexOf("IDAT");
  const damaged = Buffer.from(png);
  for (let index = idat + 100; index < idat + 140; index += 1) damaged[index] = damaged[index]! ^ 0xff;
  await refused(t, damaged, "corrupt", /^the image data is corrupt or truncated$/);
  const badChecksum = Buffer.from(png);
  const crcOffset = idat + 4 + badChecksum.readUInt32BE(idat - 4);
  badChecksum[crcOffset] = badChecksum[crcOffset]! ^ 0xff;
  await refused(t, badChecksum, "corrupt", /corrupt or truncated/);
});

test("a PNG signature followed by garbage is not an image", async (t) => {
  const fake = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(200, 0x41)]);
  await refused(t, fake, "not_an_image", /not a recognisable image/);
});

test("documents and text are refused as not images", async (t) => {
  await refused(t, Buffer.from("just some text, nothing to see\n"), "not_an_image", /^the data is not a recognisable image/);
  await refused(t, Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "latin1"), "not_an_image", /application\/pdf/);
  await refused(t, Buffer.from("<!doctype html><html><body><img src=x onerror=alert(1)></body></html>"), "not_an_image", /not a recognisable image/);
  const zip = zlib.gzipSync(Buffer.from("hello"));
  await refused(t, zip, "not_an_image", /application\/gzip/);
  await refused(t, `data:image/png;base64,${Buffer.from("%PDF-1.4\n").toString("base64")}`, "not_an_image", /application\/pdf/);
});

test("SVG is refused explicitly, as a file and as a data: URL", async (t) => {
  const svg = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
  await refused(t, Buffer.from(svg), "unsupported_type", /^SVG images are not supported; send PNG, JPEG, WebP or GIF$/);
  await refused(t, `data:image/svg+xml,${encodeURIComponent(svg)}`, "unsupported_type", /SVG/);
  await refused(t, `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`, "unsupported_type", /SVG/);
});

test("image types outside PNG, JPEG, WebP and GIF are refused by name", async (t) => {
  const tiff = await sharp({ create: { width: 4, height: 4, channels: 3, background: "#123456" } })
    .tiff()
    .toBuffer();
  await refused(t, tiff, "unsupported_type", /^image\/tiff images are not supported/);
});

test("too many bytes are refused before decoding, whatever the form", async (t) => {
  const png = await pngWithAlpha();
  const small = { maxBytes: png.length - 1, maxPixels: 4_000_000 };
  await refused(t, png, "too_large", new RegExp(`larger than the ${png.length - 1}-byte limit`), small);
  await refused(t, png.toString("base64"), "too_large", /byte limit/, small);
  await refused(t, `data:image/png;base64,${png.toString("base64")}`, "too_large", /byte limit/, small);
  t.like(await decodeImageInput(png.toString("base64"), { ...small, maxBytes: png.length }), { mediaType: "image/png" });
});

test("malformed sources are refused with what was wrong", async (t) => {
  await refused(t, "this is not base64!", "invalid_source", /not valid base64/);
  await refused(t, "abcde", "invalid_source", /not valid base64/);
  await refused(t, "   ", "invalid_source", /empty/);
  await refused(t, "data:image/png;base64", "invalid_source", /no comma/);
  await refused(t, "data:image/png;base64,@@@@", "invalid_source", /data: URL is not valid base64/);
  await refused(t, "file:///etc/passwd", "invalid_source", /http\(s\) URL, a data: URL or base64/);
  await refused(t, "ftp://example.com/a.png", "invalid_source", /http\(s\) URL/);
  await refused(t, Buffer.alloc(0), "not_an_image", /empty/);
});

/** bytesFromBase64 as it was before its fast path: the reference the fast path must agree with. */
function referenceBase64(text: string, maxBytes: number): Buffer {
  const compact = text.replace(/\s+/g, "");
  if (compact.length === 0) throw new InvalidImageError("invalid_source", "the image data is empty");
  if (compact.length % 4 === 1 || !(/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || /^[A-Za-z0-9_-]*={0,2}$/.test(compact))) {
    throw new InvalidImageError("invalid_source", "the image data is not valid base64");
  }
  const padding = compact.endsWith("==") ? 2 : compact.endsWith("=") ? 1 : 0;
  if (Math.floor((compact.length * 3) / 4) - padding > maxBytes) throw new InvalidImageError("too_large", "too large");
  return Buffer.from(compact, "base64");
}

test("base64: the native fast path accepts, refuses and decodes exactly as the checks it skips", (t) => {
  const samples: string[] = ["", " ", "=", "==", "A", "AA", "AAA", "AAAA", "QQ", "QQ=", "QQ==", "QQ===", "QR==", "QUJDQ=", "QUJDQQ="];
  for (let length = 0; length < 40; length++) {
    const bytes = Buffer.from(Array.from({ length }, (_, index) => (index * 97 + length * 31) % 256));
    const standard = bytes.toString("base64");
    const url = bytes.toString("base64url");
    const unpadded = standard.replace(/=+$/, "");
    samples.push(standard, url, unpadded, `${url}=`, `${unpadded}===`, ` ${standard}\n`, standard.replace(/(.{4})/g, "$1\r\n"));
    if (standard.length > 2) {
      const middle = Math.floor(standard.length / 2);
      for (const odd of ["-", "_", "+", "/", "=", "!", "\u00a0", "\u0141", "\u2028", "é", ".", "\0"]) {
        samples.push(standard.slice(0, middle) + odd + standard.slice(middle), url.slice(0, middle) + odd + url.slice(middle), standard.slice(0, -1) + odd);
      }
    }
  }
  for (const text of samples) {
    for (const maxBytes of [0, 10, 1_000]) {
      let expected: Buffer | string;
      try {
        expected = referenceBase64(text, maxBytes);
      } catch (error) {
        expected = (error as InvalidImageError).reason;
      }
      let actual: Buffer | string;
      try {
        actual = bytesFromBase64(text, maxBytes);
      } catch (error) {
        actual = (error as InvalidImageError).reason;
      }
      t.deepEqual(actual, expected, JSON.stringify({ text, maxBytes }));
    }
  }
});

test("alpha: a picture is opaque only when every alpha byte is 255, the last one included", async (t) => {
  const width = 300;
  const height = 500;
  const pixels = Buffer.alloc(width * height * 4, 255);
  const opaque = await sharp(pixels, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
  t.like(await probeImage(opaque, limits), { hasAlpha: true, opaque: true });
  for (const index of [0, width * height - 1, 70_000]) {
    const holed = Buffer.from(pixels);
    holed[index * 4 + 3] = 254;
    const png = await sharp(holed, { raw: { width, height, channels: 4 } })
      .png()
      .toBuffer();
    t.like(await probeImage(png, limits), { hasAlpha: true, opaque: false }, `pixel ${index}`);
  }
});

// ---- encodeImage --------------------------------------------------------------------------------

test("encodeImage converts between formats with real pixels", async (t) => {
  const png = await pngWithAlpha();
  const webp = await encodeImage(png, { format: "webp", quality: 80 });
  t.like(webp, { mediaType: "image/webp", width: 30, height: 20 });
  t.like(await decodeImageInput(webp.bytes, limits), { mediaType: "image/webp", hasAlpha: true });

  const jpg = await encodeImage(png, { format: "jpeg", quality: 90 });
  const decoded = await decodeImageInput(jpg.bytes, limits);
  t.like(decoded, { mediaType: "image/jpeg", width: 30, height: 20, hasAlpha: false });
  // Half-transparent red on white comes out pink, not dark red on black.
  const { data } = await sharp(jpg.bytes).raw().toBuffer({ resolveWithObject: true });
  t.true(data[0]! > 240 && data[1]! > 100 && data[1]! < 156, `pixel ${data[0]},${data[1]},${data[2]}`);

  const back = await encodeImage(jpg.bytes, { format: "png" });
  t.like(await decodeImageInput(back.bytes, limits), { mediaType: "image/png", width: 30, height: 20 });
});

test("encodeImage applies the EXIF orientation and refuses corrupt input", async (t) => {
  const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#abcdef" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();
  t.like(await encodeImage(rotated, { format: "png" }), { width: 20, height: 40 });
  const error = await t.throwsAsync(encodeImage(Buffer.from("nope"), { format: "png" }), { instanceOf: InvalidImageError });
  t.is(error?.reason, "corrupt");
  const tiny = await sharp({ create: { width: 1, height: 1, channels: 3, background: "#000" } })
    .png()
    .toBuffer();
  const bomb = await t.throwsAsync(encodeImage(withPngDimensions(tiny, 30000, 30000), { format: "webp", maxPixels: 1_000_000 }), {
    instanceOf: InvalidImageError,
  });
  t.is(bomb?.reason, "too_many_pixels");
});
