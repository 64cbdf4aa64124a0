package listener

// sunPathMax is the size of sockaddr_un.sun_path on macOS, including the terminating NUL
// (<sys/un.h>).
const sunPathMax = 104
