"""tc_face.py - a real face for the v2 files' fidelity check (check_cpu_int16.py).

The photograph is the NASA astronaut portrait (public domain) Debian ships in
python3-skimage as skimage/data/astronaut.png (512x512, 8-bit RGB);
scripts/setup.sh extracts that one file from the package's .deb into
/var/cache/nbgkit (doc/testing.md).  Found by the environment variable
NBG_FACE_IMAGE, else the path given (the meson option face_image); its
SHA-256 must be FACE_SHA256.

From it, with the float TFLite sources only (tflite_graph of
check_cpu_int16.py, float64), face_inputs derives one input per model, as
MediaPipe's face landmarker chains them (face_detector_graph.cc,
face_landmarker_graph.cc, face_blendshapes_graph.cc):

- detectors: the whole photo resampled to the input's size (sample below:
  bilinear, pixel centres at half-integers, TFLite's half-pixel
  RESIZE_BILINEAR), x / 127.5 - 1 (range [-1, 1]);
- landmarks: a square of the photo around the face, resampled to 256x256,
  x / 255 (range [0, 1]).  The square is the short-range detector's (the
  source's) best anchor: its box decoded as MediaPipe's
  TensorsToDetectionsCalculator does (reverse_output_order, scales 128,
  fixed anchor size: centre = anchor + r[0:2] / 128, size r[2:4] / 128), its
  anchors those of SsdAnchorsCalculator for the short-range model (strides
  8, 16, 16, 16, two anchors a layer, layers of one stride sharing the grid,
  centres (i + 0.5) / grid), then a side 1.5 x the box's longer side
  (RectTransformationCalculator scale 1.5, square_long) around its centre.
  Not rotated (MediaPipe turns the square by the eyes' angle): the same
  input to the file and the source either way;
- blendshapes: the 146 landmarks of kLandmarksSubsetIdxs
  (face_blendshapes_graph.cc, BLENDSHAPE_SUBSET below) among the 478 the
  source landmarks model gives for that crop, x and y, mapped back to photo
  pixels (MediaPipe's LandmarksToTensorCalculator with the image size).
"""
import hashlib
import os
import struct
import zlib

FACE_SHA256 = "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"

# kLandmarksSubsetIdxs of MediaPipe's
# mediapipe/tasks/cc/vision/face_landmarker/face_blendshapes_graph.cc
BLENDSHAPE_SUBSET = (
    0, 1, 4, 5, 6, 7, 8, 10, 13, 14, 17, 21, 33, 37, 39, 40, 46, 52, 53, 54, 55, 58, 61, 63, 65, 66, 67, 70,
    78, 80, 81, 82, 84, 87, 88, 91, 93, 95, 103, 105, 107, 109, 127, 132, 133, 136, 144, 145, 146, 148, 149,
    150, 152, 153, 154, 155, 157, 158, 159, 160, 161, 162, 163, 168, 172, 173, 176, 178, 181, 185, 191, 195,
    197, 234, 246, 249, 251, 263, 267, 269, 270, 276, 282, 283, 284, 285, 288, 291, 293, 295, 296, 297, 300,
    308, 310, 311, 312, 314, 317, 318, 321, 323, 324, 332, 334, 336, 338, 356, 361, 362, 365, 373, 374, 375,
    377, 378, 379, 380, 381, 382, 384, 385, 386, 387, 388, 389, 390, 397, 398, 400, 402, 405, 409, 415, 454,
    466, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477)


def face_path(option):
    """The photograph's path (NBG_FACE_IMAGE, else option), or None when
    no file is there."""
    p = os.environ.get("NBG_FACE_IMAGE") or option
    return p if p and os.path.isfile(p) else None


def read_png_rgb(path):
    """The PNG as a numpy uint8 array [H][W][3]; ValueError unless its
    SHA-256 is FACE_SHA256 and it is 8-bit RGB, not interlaced (IHDR: bit
    depth 8, colour type 2, compression 0, filter method 0, interlace 0)."""
    import numpy as np
    data = open(path, "rb").read()
    if hashlib.sha256(data).hexdigest() != FACE_SHA256:
        raise ValueError("%s: SHA-256 %s, not the astronaut photograph's %s" %
                         (path, hashlib.sha256(data).hexdigest(), FACE_SHA256))
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("%s: no PNG" % path)
    w, h, depth, colour, comp, filt, lace = struct.unpack(">IIBBBBB", data[16:29])
    if (depth, colour, comp, filt, lace) != (8, 2, 0, 0, 0):
        raise ValueError("%s: bit depth %d, colour type %d, interlace %d: only 8-bit RGB, not interlaced" %
                         (path, depth, colour, lace))
    idat, p = b"", 8
    while p + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[p:p + 8])
        if kind == b"IDAT":
            idat += data[p + 8:p + 8 + n]
        p += 12 + n
    stride = 3 * w
    raw = zlib.decompress(idat)
    if len(raw) != h * (stride + 1):
        raise ValueError("%s: %d bytes of image data for %dx%d" % (path, len(raw), w, h))
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int64)
    for y in range(h):
        f, row = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        if f == 1:                      # Sub: a running sum per channel
            row = np.cumsum(row.reshape(w, 3), axis=0).reshape(-1)
        elif f == 2:                    # Up
            row = row + prev
        elif f in (3, 4):               # Average, Paeth: sequential
            r, up = row.tolist(), prev.tolist()
            for i in range(stride):
                a = r[i - 3] if i >= 3 else 0
                c = up[i - 3] if i >= 3 else 0
                b = up[i]
                if f == 3:
                    r[i] = (r[i] + (a + b) // 2) & 255
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    r[i] = (r[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            row = np.array(r, np.int64)
        elif f != 0:
            raise ValueError("%s: row %d has filter type %d" % (path, y, f))
        prev = row & 255
        out[y] = prev
    return out.reshape(h, w, 3)


def sample(img, x0, y0, side, n):
    """The square [x0, x0 + side) x [y0, y0 + side) of img [H][W][C]
    resampled to n x n: bilinear, output pixel (i, j) at image position
    (x0 + (j + 0.5) side / n - 0.5, likewise y), neighbours clamped to the
    image (the whole image: TFLite's half-pixel RESIZE_BILINEAR)."""
    import numpy as np

    def axis(o, size):
        v = o + (np.arange(n) + 0.5) * side / n - 0.5
        lo = np.clip(np.floor(v), 0, size - 1).astype(int)
        hi = np.clip(np.floor(v) + 1, 0, size - 1).astype(int)
        return lo, hi, np.clip(v - np.floor(v), 0, 1)

    y_lo, y_hi, fy = axis(y0, img.shape[0])
    x_lo, x_hi, fx = axis(x0, img.shape[1])
    img = img.astype(np.float64)
    fy, fx = fy[:, None, None], fx[None, :, None]
    top = img[y_lo][:, x_lo] * (1 - fx) + img[y_lo][:, x_hi] * fx
    bot = img[y_hi][:, x_lo] * (1 - fx) + img[y_hi][:, x_hi] * fx
    return top * (1 - fy) + bot * fy


def short_range_anchors():
    """SsdAnchorsCalculator's anchor centres (x, y) for the short-range
    detector (128x128, strides 8, 16, 16, 16, two anchors a layer, offset
    0.5), in its order: grid by grid, row by row, the anchors of a cell."""
    import numpy as np
    out = []
    for stride, per_cell in ((8, 2), (16, 6)):
        g = 128 // stride
        for y in range(g):
            for x in range(g):
                out += [((x + 0.5) / g, (y + 0.5) / g)] * per_cell
    return np.array(out)


def face_inputs(run_source, src_dir, photo):
    """{model name: float input} for the four models (see the module's
    text), and a sentence saying how they were made.  run_source(path,
    input) gives the source's outputs by tensor name."""
    import numpy as np
    size = photo.shape[0]
    ins = {}
    for model, n in (("face_detector", 128), ("face_detector_full_range", 192)):
        ins[model] = sample(photo, 0, 0, size, n) / 127.5 - 1
    det = run_source(os.path.join(src_dir, "face_detector.tflite"), ins["face_detector"])
    scores = det["classificators"].reshape(-1)
    best = int(np.argmax(scores))
    r = det["regressors"].reshape(-1, 16)[best]
    cx, cy = (short_range_anchors()[best] + r[0:2] / 128) * size
    side = 1.5 * max(r[2], r[3]) / 128 * size
    x0, y0 = cx - side / 2, cy - side / 2
    ins["face_landmarks_detector"] = sample(photo, x0, y0, side, 256) / 255
    lm = run_source(os.path.join(src_dir, "face_landmarks_detector.tflite"), ins["face_landmarks_detector"])
    pts = lm["Identity"].reshape(478, 3)[list(BLENDSHAPE_SUBSET), :2]
    ins["face_blendshapes"] = np.stack([x0 + pts[:, 0] * side / 256, y0 + pts[:, 1] * side / 256], -1)
    how = ("the source detector's best anchor %d (score %.2f): the crop x %.1f, y %.1f, side %.1f px of the "
           "photo; the 146 landmarks x in [%.0f, %.0f], y in [%.0f, %.0f]" %
           (best, 1 / (1 + np.exp(-min(max(float(scores[best]), -100), 100))), x0, y0, side,
            ins["face_blendshapes"][:, 0].min(), ins["face_blendshapes"][:, 0].max(),
            ins["face_blendshapes"][:, 1].min(), ins["face_blendshapes"][:, 1].max()))
    return ins, how
