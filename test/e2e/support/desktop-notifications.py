"""A desktop's notification service (org.freedesktop.Notifications) on a private D-Bus session bus,
for the dashboard tests: chromium on Linux shows a web page's notifications through it, and a click on
one comes back from it as the ActionInvoked signal. Each notification shown is printed as a JSON line
on stdout ({"id", "summary", "body"}); a line "click ID" on stdin clicks that notification as a person
would (the "default" action), so chromium handles it as a real click, user activation included.
Built on python3-dbus and python3-gi (Debian's packages)."""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

INTERFACE = "org.freedesktop.Notifications"


class Notifications(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.last_id = 0

    @dbus.service.method(INTERFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, icon, summary, body, actions, hints, timeout):
        self.last_id += 1
        print(json.dumps({"id": self.last_id, "summary": str(summary), "body": str(body)}), flush=True)
        return self.last_id

    @dbus.service.method(INTERFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body", "actions"]

    @dbus.service.method(INTERFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("staragent-test", "StarAgent", "1", "1.2")

    @dbus.service.method(INTERFACE, in_signature="u", out_signature="")
    def CloseNotification(self, notification_id):
        self.NotificationClosed(notification_id, 3)

    @dbus.service.signal(INTERFACE, signature="us")
    def ActionInvoked(self, notification_id, action_key):
        pass

    @dbus.service.signal(INTERFACE, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(INTERFACE, bus)
    service = Notifications(bus)
    loop = GLib.MainLoop()

    def on_input(source, condition):
        line = sys.stdin.readline()
        if line == "":
            loop.quit()
            return False
        words = line.split()
        if len(words) == 2 and words[0] == "click":
            service.ActionInvoked(int(words[1]), "default")
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
    print(json.dumps({"ready": name.get_name()}), flush=True)
    loop.run()


main()
