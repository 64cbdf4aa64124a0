package listener

// sunPathMax is the size of sockaddr_un.sun_path on Linux, including the terminating NUL
// (unix(7)).
const sunPathMax = 108
