// CLoudness: libebur128 (Debian libebur128-dev), the EBU R128 / ITU-R BS.1770
// loudness, loudness range and true-peak library, as a Swift module.
#include <ebur128.h>
