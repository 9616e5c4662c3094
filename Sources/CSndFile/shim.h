// CSndFile: libsndfile (Debian libsndfile1-dev) as a Swift module. Nothing but the header.
#include <sndfile.h>
