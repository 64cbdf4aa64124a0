// Package deploy holds no code: its tests check the systemd units, launchd plists, default
// root-helper policy and the make install/uninstall targets that ship the helpers.
package deploy
