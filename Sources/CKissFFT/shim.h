// CKissFFT: KissFFT (Debian libkissfft-dev, BSD-3-Clause), the mixed-radix
// FFT the analyzer uses, as a Swift module: its real-input transform.
// Debian builds it for float samples only (kissfft-float.pc).
#define kiss_fft_scalar float
#include <kissfft/kiss_fftr.h>
