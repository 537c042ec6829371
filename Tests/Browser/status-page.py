#!/usr/bin/env python3
"""Opens the exporter's status page in Debian's headless chromium, driven by Selenium through
Debian's chromedriver, and prints what a person sees there as one JSON object.

    status-page.py URL SPKI USER CREDENTIAL < password

URL is the page (https://127.0.0.1:PORT/); SPKI the base64 SHA-256 of the server certificate's
public key, the one certificate chromium is told to accept (--ignore-certificate-errors-spki-list:
the test's server certificate is self-signed); USER the basic-auth user, whose password comes on
standard input so that it is in no process's arguments; CREDENTIAL the alias the page's probe
form is submitted with. The page is first opened without credentials, then with an Authorization
header set through the DevTools protocol (a password in the URL would be in the history).
"""
import base64
import json
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

url, spki, user, credential = sys.argv[1:5]
password = sys.stdin.readline().rstrip("\n")
# Debian's browser and driver: Selenium Manager must not look for (or download) others.
os.environ["SE_OFFLINE"] = "true"

profile = tempfile.mkdtemp(prefix="status-page-chromium-")
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-extensions",
    "--user-data-dir=" + profile,
    "--ignore-certificate-errors-spki-list=" + spki,
]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
out = {}
try:
    driver.set_page_load_timeout(120)
    driver.get(url)
    # Chromium answers a 401 with an empty page (headless, it asks no one for a password).
    out["unauthenticated"] = driver.page_source

    header = base64.b64encode(f"{user}:{password}".encode()).decode()
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": "Basic " + header}})
    driver.get(url)
    out["url"] = driver.current_url
    out["title"] = driver.title
    out["source"] = driver.page_source
    out["text"] = driver.find_element(By.TAG_NAME, "body").text
    out["store"] = driver.find_element(By.ID, "store-state").text
    out["apps"] = [
        {
            "app": row.get_attribute("data-app"),
            "environment": row.get_attribute("data-environment"),
            "class": row.get_attribute("class"),
            "text": row.text,
        }
        for row in driver.find_elements(By.CSS_SELECTOR, "#apps tr[data-app]")
    ]
    out["probes"] = [
        {"credential": row.get_attribute("data-credential"), "class": row.get_attribute("class"), "text": row.text}
        for row in driver.find_elements(By.CSS_SELECTOR, "#probes tr[data-credential]")
    ]
    out["links"] = [link.get_attribute("href") for link in driver.find_elements(By.TAG_NAME, "a")]

    # The links and the form work as a person uses them. A click does not wait for the page it
    # opens: wait (bounded) until that page is there and has its text.
    def opened(path):
        def loaded(driver):
            if path not in driver.current_url:
                return False
            bodies = driver.find_elements(By.TAG_NAME, "body")
            return bodies[0].text if bodies and bodies[0].text else False

        return WebDriverWait(driver, 120).until(loaded)

    driver.find_element(By.LINK_TEXT, "Metrics").click()
    out["metrics"] = opened("/metrics")
    driver.get(url)
    Select(driver.find_element(By.NAME, "credential")).select_by_value(credential)
    Select(driver.find_element(By.NAME, "environment")).select_by_value("production")
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    out["probe"] = opened("/probe")
    out["probe_url"] = driver.current_url
finally:
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
print(json.dumps(out))
